"""Adapters that plug memsvc into agent frameworks; each is an optional extra
(``memsvc[langchain]``) and imports only the client side of memsvc."""
