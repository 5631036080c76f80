"""Background jobs: queued, retried with backoff and parked in a dead-letter list."""
