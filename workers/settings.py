"""The arq entry point: ``arq workers.settings.WorkerSettings`` runs one memsvc worker.

``memsvc worker`` runs the same worker with a job loop that outlives Redis outages
(:class:`memsvc.worker.ResilientWorker`); prefer it.
"""

from memsvc.worker import WorkerSettings

__all__ = ["WorkerSettings"]
