"""The arq settings of the memsvc worker (``workers.settings``); the worker itself is
:mod:`memsvc.service.worker`. Run one with ``memsvc worker``."""
