"""The arq entry point: ``arq workers.settings.WorkerSettings`` runs one memsvc worker.

``memsvc worker`` runs the same worker with a job loop that outlives Redis outages
(:class:`memsvc.service.worker.ResilientWorker`); prefer it.
"""

from memsvc.service.worker import WorkerSettings

__all__ = ["WorkerSettings"]
