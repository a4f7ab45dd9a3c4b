"""The one error type of the HTTP API: a status and a message, sent as ``{"error": message}``."""


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
