"""``kgp serve``: the HTTP API, its API keys and (later) its web page."""
