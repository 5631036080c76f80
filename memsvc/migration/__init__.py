"""Moving memory from DeerFlow's memory.json into memsvc: its layouts, the mapping, the run."""
