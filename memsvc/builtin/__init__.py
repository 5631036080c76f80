"""The builtin provider: the memory files as a frozen snapshot and the ``memory`` tool."""
