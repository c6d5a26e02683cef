"""The compile service (python -m benchmatrix_service; __main__.py says what it does).

SERVED is None in an ordinary process. In a process the service forked for a request it is a dict
the helper may read to report that it was served: {"service_s": seconds from the client's send of
the request to its fork (the service's own imports when this request waited for them)}.
"""

SERVED = None
