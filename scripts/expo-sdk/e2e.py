"""End to end with the stock Python Expo SDK (exponent_server_sdk, pinned by scripts/expo-sdk-test.sh) against a
running PushRelay whose upstream is `pushrelay simulate`.

Environment: RELAY_URL (http://127.0.0.1:PORT) and RELAY_KEY (a tenant key). Exits non-zero on the first
expectation that fails, naming it. Each SDK method is used the way an SDK user would configure it against the relay:
the key as Bearer on a session, in the API prefix (`api_url="/t/<key>/--/api/v2"`), or in the host
(`host=".../t/<key>"`, which the SDK keeps for receipts only).
"""

import os
import sys
import time

import requests
from exponent_server_sdk import (
    DeviceNotRegisteredError,
    InvalidCredentialsError,
    PushClient,
    PushMessage,
    PushServerError,
)

BASE = os.environ["RELAY_URL"]
KEY = os.environ["RELAY_KEY"]
# The relay first asks the simulator for Expo receipts 1 s after sending (receipt_delay_seconds = 1).
RECEIPTS_WITHIN_SECONDS = 45


def fail(what):
    print(f"expo-sdk e2e: FAILED: {what}", file=sys.stderr)
    sys.exit(1)


def expect(condition, what):
    if not condition:
        fail(what)
    print(f"expo-sdk e2e: ok: {what}")


def expect_raises(kind, call, what):
    try:
        call()
    except kind:
        print(f"expo-sdk e2e: ok: {what}")
        return
    except Exception as error:  # noqa: BLE001 - any other exception is the failure being reported
        fail(f"{what}: raised {type(error).__name__}: {error}")
    fail(f"{what}: nothing was raised")


session = requests.Session()
session.headers.update({
    "authorization": f"Bearer {KEY}",
    "accept": "application/json",
    "accept-encoding": "gzip, deflate",
    "content-type": "application/json",
})
by_session = PushClient(host=BASE, session=session)
by_prefix = PushClient(host=BASE, api_url=f"/t/{KEY}/--/api/v2")
by_host = PushClient(host=f"{BASE}/t/{KEY}")

# publish_multiple, with the legacy display_in_foreground (sent as _displayInForeground) on one message.
messages = [
    PushMessage(to="ExponentPushToken[sdk-ok-1]", title="Hello", body="from the SDK", display_in_foreground=True),
    PushMessage(to="ExponentPushToken[0610sdk-late-dead]", title="Late", body="its receipt says the token is dead"),
    PushMessage(to="ExponentPushToken[0407sdk-credentials]", title="Creds", body="its receipt refuses the credentials"),
]
tickets = by_session.publish_multiple(messages)
expect(len(tickets) == 3, "publish_multiple (key as Bearer) answers a ticket per message")
for ticket in tickets:
    ticket.validate_response()
expect(all(ticket.is_success() and ticket.id for ticket in tickets), "every ticket is ok with a receipt id, the legacy field included")

prefixed = by_prefix.publish_multiple([PushMessage(to="ExponentPushToken[sdk-ok-2]", body="key in the API prefix")])
prefixed[0].validate_response()
expect(prefixed[0].is_success(), "publish_multiple with the key in api_url")

dead = by_session.publish(PushMessage(to="ExponentPushToken[0410sdk-dead]", body="dead at once"))
expect_raises(DeviceNotRegisteredError, dead.validate_response, "a dead token's ticket raises DeviceNotRegisteredError")

wrong = PushClient(host=BASE, api_url="/t/prk_0000000000000000_wrongwrongwrongwrongwrongwrongwrongwrongwro/--/api/v2")
expect_raises(
    (PushServerError, requests.HTTPError),
    lambda: wrong.publish(PushMessage(to="ExponentPushToken[sdk-ok-3]", body="x")),
    "a wrong key is refused as a whole request (PushServerError)",
)

# check_receipts_multiple: receipts are left out until final, as Expo does; wait for all four.
everything = tickets + prefixed
deadline = time.monotonic() + RECEIPTS_WITHIN_SECONDS
while True:
    receipts = {receipt.id: receipt for receipt in by_session.check_receipts_multiple(everything)}
    if len(receipts) == len(everything):
        break
    if time.monotonic() > deadline:
        fail(f"only {len(receipts)} of {len(everything)} receipts final after {RECEIPTS_WITHIN_SECONDS} s")
    time.sleep(0.5)
expect(True, "check_receipts_multiple (key as Bearer) returns every receipt once final")

receipts[tickets[0].id].validate_response()
receipts[prefixed[0].id].validate_response()
expect(receipts[tickets[0].id].is_success() and receipts[prefixed[0].id].is_success(), "delivered receipts are ok")
expect_raises(
    DeviceNotRegisteredError,
    receipts[tickets[1].id].validate_response,
    "a late Expo receipt raises DeviceNotRegisteredError",
)
expect_raises(
    InvalidCredentialsError,
    receipts[tickets[2].id].validate_response,
    "refused credentials raise InvalidCredentialsError",
)

# The legacy check_receipts() posts without the session: the key travels in the host.
legacy = {receipt.id: receipt for receipt in by_host.check_receipts(tickets)}
expect(set(legacy) == {ticket.id for ticket in tickets}, "check_receipts with the key in the host")
expect_raises(
    DeviceNotRegisteredError,
    legacy[tickets[1].id].validate_response,
    "check_receipts shows the late DeviceNotRegistered too",
)
prefixed_receipts = by_prefix.check_receipts_multiple(prefixed)
expect(len(prefixed_receipts) == 1 and prefixed_receipts[0].is_success(), "check_receipts_multiple with the key in api_url")

print("expo-sdk e2e: every SDK method works against the relay")
