"""A small local HTTP server that speaks OpenAI's chat-completions protocol, for tests: it
answers with a function of the prompt, and can be scripted to fail first (HTTP status codes, a
slow reply), so retries and timeouts are exercised against a real socket. Asked to stream, it
sends the reply in server-sent chunks as OpenAI does (or drops the connection halfway)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[list[dict[str, str]]], str]


@dataclass
class ChatServer:
    respond: Responder
    script: list[tuple[str, float]] = field(default_factory=list)  # ("status", 429) / ("sleep", s)
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    cut_stream: bool = False  # a streamed reply drops its connection halfway
    piece_delay: float = 0.0  # seconds between streamed pieces

    def next_step(self) -> tuple[str, float] | None:
        with self.lock:
            return self.script.pop(0) if self.script else None


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, content: str, model: str) -> None:
            """The reply as OpenAI streams it: server-sent chunks of a few characters, then
            [DONE]; with ``server.cut_stream``, the connection drops halfway instead."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            pieces = [content[i : i + 4] for i in range(0, len(content), 4)]
            deltas: list[tuple[dict[str, str], str | None]] = [
                ({"content": p}, None) for p in pieces
            ]
            deltas.append(({}, "stop"))  # the last chunk says why the reply ended
            for n, (delta, finish) in enumerate(deltas):
                if server.cut_stream and n == len(pieces) // 2:
                    self.wfile.flush()
                    self.connection.shutdown(2)  # SHUT_RDWR: the reply stops midway
                    return
                chunk = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                time.sleep(server.piece_delay)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with server.lock:
                server.requests.append(body)
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            step = server.next_step()
            if step is not None and step[0] == "status":
                self._send(int(step[1]), {"error": {"message": f"scripted {int(step[1])}"}})
                return
            if step is not None and step[0] == "sleep":
                time.sleep(step[1])
            content = server.respond(body.get("messages", []))
            if body.get("stream"):
                self._stream(content, str(body.get("model", "test")))
                return
            self._send(
                200,
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )

    return Handler


@contextmanager
def chat_server(respond: Responder) -> Iterator[ChatServer]:
    state = ChatServer(respond)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
