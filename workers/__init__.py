"""The memsvc worker: arq settings (``workers.settings``) and job functions (``workers.jobs``).

Run one with ``memsvc worker`` (or ``arq workers.settings.WorkerSettings``).
"""
