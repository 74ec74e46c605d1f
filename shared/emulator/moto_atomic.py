"""moto_server with atomic DynamoDB requests.

moto's threaded server evaluates a condition expression and applies the write in
separate steps without a lock, so two concurrent conditional writes on one key can
both succeed (seen: 2 winners of 30 compare-and-swap updates). DynamoDB never does
that. This launcher serialises DynamoDB requests (other services, such as SQS long
polls, stay concurrent) and then runs moto_server with the same arguments.

Run: python3 moto_atomic.py -H 127.0.0.1 -p 5000
"""

import sys
import threading

from moto.dynamodb.responses import DynamoHandler
from moto.server import main

_lock = threading.Lock()
_call_action = DynamoHandler.call_action


def _atomic_call_action(self):
    with _lock:
        return _call_action(self)


DynamoHandler.call_action = _atomic_call_action

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
