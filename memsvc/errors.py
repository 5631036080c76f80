"""What a memsvc client call raises, as one tree to catch at the level you need.

```
MemoryServiceError            the service could not process the request
 └── MemoryUnavailableError   Redis or the workers did not answer in time: retry later
```

Errors of the caller's own input are ``ValueError``s where they arise
(``InvalidIdError``, pydantic's ``ValidationError``); results the model reads
(``call_tool``, ``prefetch``) are never exceptions.
"""

from __future__ import annotations


class MemoryServiceError(RuntimeError):
    """The service answered that it could not process a request."""


class MemoryUnavailableError(MemoryServiceError):
    """Redis refused, or did not answer within its timeout, or no worker replied in time.

    Transient: the same call may succeed later. An event that timed out on its way
    in may still be delivered once Redis answers again.
    """
