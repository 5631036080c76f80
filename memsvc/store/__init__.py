"""The builtin memory files: their format, edits, locks, journal and the store itself."""
