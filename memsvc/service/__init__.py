"""The worker side: the event bus, the consumer, the handlers and the memory manager."""
