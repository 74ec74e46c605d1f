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


# The AWS SDKs send the same amz-sdk-invocation-id header on every attempt of
# one operation. When an attempt's response is lost on the way back (seen under
# load: the client reads "use of closed network connection" after a 200), the
# SDK retries an operation the emulator already applied, and a conditional
# write then fails its own condition. Remembering each operation's first
# response and answering retries with it makes the emulator's retries as
# harmless as DynamoDB's are in practice.
_first_responses = {}  # invocation id -> response of a write
_FIRST_RESPONSES_MAX = 20000
# Only writes need it (reads are safe to repeat), and their answers are small.
_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}


def _atomic_call_action(self):
    with _lock:
        invocation = None
        try:
            if self._get_action() in _WRITES:
                invocation = self.headers.get("amz-sdk-invocation-id")
        except Exception:  # noqa: BLE001 - no headers: no memory
            pass
        if invocation and invocation in _first_responses:
            return _first_responses[invocation]
        response = _call_action(self)
        if invocation:
            if len(_first_responses) >= _FIRST_RESPONSES_MAX:
                _first_responses.clear()
            _first_responses[invocation] = response
        return response


DynamoHandler.call_action = _atomic_call_action


# DynamoDB makes TransactWriteItems idempotent for 10 minutes by its
# ClientRequestToken, which the AWS SDKs fill in and keep across their retries:
# a retry of a transaction that was applied (its response lost to a dropped
# connection) succeeds without applying it again. moto ignores the token, so
# such a retry failed its own conditions. Applied transactions are remembered
# here by token (runs under _lock, like every DynamoDB request).
import hashlib  # noqa: E402
import json as _json  # noqa: E402
import time  # noqa: E402

from moto.dynamodb.exceptions import MockValidationException  # noqa: E402

_IDEMPOTENCY_WINDOW = 600.0
_applied = {}  # token -> (request digest, applied at)
_transact_write_items = DynamoHandler.transact_write_items


def _idempotent_transact_write_items(self):
    token = self.body.get("ClientRequestToken")
    if not token:
        return _transact_write_items(self)
    now = time.monotonic()
    for t in [t for t, (_, at) in _applied.items() if now - at > _IDEMPOTENCY_WINDOW]:
        del _applied[t]
    digest = hashlib.sha256(
        _json.dumps(self.body.get("TransactItems"), sort_keys=True, default=repr).encode()
    ).hexdigest()
    seen = _applied.get(token)
    if seen is not None:
        if seen[0] != digest:
            raise MockValidationException(
                "IdempotentParameterMismatch: the ClientRequestToken was used for another request"
            )
        return _ok()
    result = _transact_write_items(self)
    _applied[token] = (digest, now)
    return result


def _ok():
    from moto.core.responses import ActionResult

    return ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})


DynamoHandler.transact_write_items = _idempotent_transact_write_items


# moto backs up a table before a transaction by deep-copying it once per item
# of the transaction (25 copies of the whole table for a 25-item transaction),
# which made seeding thousands of items take minutes and tens of gigabytes.
# Within one transaction, copy each table once.
import copy as _copy  # noqa: E402

import moto.dynamodb.models as _ddb_models  # noqa: E402


class _OncePerTableCopy:
    def __init__(self):
        self.cache = None

    def deepcopy(self, obj, memo=None):
        if self.cache is not None and isinstance(obj, _ddb_models.Table):
            if id(obj) not in self.cache:
                self.cache[id(obj)] = _copy.deepcopy(obj, memo)
            return self.cache[id(obj)]
        return _copy.deepcopy(obj, memo)

    def __getattr__(self, name):
        return getattr(_copy, name)


_table_copy = _OncePerTableCopy()
_ddb_models.copy = _table_copy
_backend_transact = _ddb_models.DynamoDBBackend.transact_write_items


def _transact_copying_once(self, transact_items):
    _table_copy.cache = {}
    try:
        return _backend_transact(self, transact_items)
    finally:
        _table_copy.cache = None


_ddb_models.DynamoDBBackend.transact_write_items = _transact_copying_once


# /moto-api/data.json dumps every tracked object (every DynamoDB item of every
# test table), which gets slow as a test run fills the emulator. With
# ?service=ses&service=sns it dumps only those services: tests read sent e-mail
# and SMS that way.
from urllib.parse import parse_qs, urlparse  # noqa: E402

from moto.moto_api._internal.responses import MotoAPIResponse  # noqa: E402

_model_data = MotoAPIResponse.model_data


def _filtered_model_data(self, request, full_url, headers):
    wanted = parse_qs(urlparse(full_url).query).get("service")
    if not wanted:
        return _model_data(self, request, full_url, headers)
    import json

    from moto.core.model_instances import model_data

    results = {}
    for service in sorted(s for s in model_data if s in wanted):
        results[service] = {}
        for name, model in sorted(model_data[service].items()):
            rows = []
            for instance in list(model.instances_tracked):
                row = {}
                for attr in dir(instance):
                    if attr.startswith("_"):
                        continue
                    try:
                        value = getattr(instance, attr)
                        json.dumps(value)
                    except (TypeError, AttributeError, ValueError):
                        continue
                    row[attr] = value
                rows.append(row)
            results[service][name] = rows
    return 200, {"Content-Type": "application/json"}, json.dumps(results)


MotoAPIResponse.model_data = _filtered_model_data

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
