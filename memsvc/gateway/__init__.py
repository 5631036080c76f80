"""The gateway: memsvc over HTTP (``/api/memory/v2``) with tokens, health and metrics, and the
HTTP client agents use instead of Redis (``memsvc[gateway]``)."""
