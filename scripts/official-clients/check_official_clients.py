#!/usr/bin/env python3
"""Drives the stores' official Python clients against a running storesim.

Google: google-api-python-client built from its bundled discovery document, with google-auth service-account
credentials read from the play-sa.json that `storesim init` wrote (its token_uri points at the simulator).
Apple: app-store-server-library's AppStoreServerAPIClient (its base URL is fixed per environment, so the script
points it at the simulator by setting the client's `_base_url`) and its SignedDataVerifier trusting the written
SimulatorRootCA.der.

Usage:
    storesim init --dir DIR --port 8787 && storesim serve --dir DIR &
    pip install -r scripts/official-clients/requirements.txt
    python3 scripts/official-clients/check_official_clients.py --dir DIR

Exit code 0 when every check passed; each check prints one line.
"""

import argparse
import json
import os
import sys
import time

import requests
from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
from google.oauth2 import service_account
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

FAILURES = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + (f": {detail}" if detail and not condition else ""))
    if not condition:
        FAILURES.append(name)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", required=True, help="directory written by storesim init")
    parser.add_argument("--url", help="simulator base URL (default: from simulator.json)")
    args = parser.parse_args()

    with open(os.path.join(args.dir, "simulator.json")) as handle:
        settings = json.load(handle)
    base = args.url or f"http://{settings['host']}:{settings['port']}"
    with open(os.path.join(args.dir, "scenario.json")) as handle:
        spec = json.load(handle)
    apple_app = next(app for app in spec["apps"] if app["platform"] == "apple")
    google_app = next(app for app in spec["apps"] if app["platform"] == "google")

    truth = requests.get(f"{base}/admin/truth/refunds", timeout=30).json()
    subscriptions = requests.get(f"{base}/admin/truth/subscriptions?limit=200", timeout=30).json()["subscriptions"]

    # Google
    credentials = service_account.Credentials.from_service_account_file(
        os.path.join(args.dir, "play-sa.json"), scopes=["https://www.googleapis.com/auth/androidpublisher"])
    service = build("androidpublisher", "v3", credentials=credentials, client_options={"api_endpoint": base},
                    static_discovery=True, cache_discovery=False)
    rows, token, pages = [], None, 0
    while True:
        request = service.purchases().voidedpurchases().list(
            packageName=google_app["storeId"], type=1, maxResults=50, token=token,
            includeQuantityBasedPartialRefund=True)
        try:
            response = request.execute()
        except HttpError as error:
            if error.resp.status == 429:
                time.sleep(31)
                continue
            raise
        pages += 1
        rows += response.get("voidedPurchases", [])
        token = response.get("tokenPagination", {}).get("nextPageToken")
        if not token:
            break
    now = truth["nowMillis"]
    expected = [void for void in truth["googleVoids"]
                if void["recorded"] and void["recordedTimeMillis"] >= now - 30 * 86_400_000]
    check("google voidedpurchases.list pages through every recorded void of 30 days",
          sorted((r["orderId"], r["voidedTimeMillis"]) for r in rows)
          == sorted((v["orderId"], str(v["voidedTimeMillis"])) for v in expected),
          f"{len(rows)} rows vs {len(expected)} expected in {pages} pages")
    google_subscription = next(s for s in subscriptions if s["platform"] == "google")
    purchase = service.purchases().subscriptionsv2().get(
        packageName=google_app["storeId"], token=google_subscription["storeId"]).execute()
    check("google subscriptionsv2.get returns the true state",
          purchase["subscriptionState"] == google_subscription["googleState"], purchase.get("subscriptionState"))
    try:
        service.purchases().subscriptionsv2().get(packageName=google_app["storeId"], token="unknown").execute()
        check("google subscriptionsv2.get of an unknown token fails", False)
    except HttpError as error:
        check("google subscriptionsv2.get of an unknown token fails with 404", error.resp.status == 404)

    # Apple
    with open(os.path.join(args.dir, "apple-key.json")) as handle:
        apple_key = json.load(handle)
    with open(os.path.join(args.dir, apple_key["privateKeyFile"]), "rb") as handle:
        signing_key = handle.read()
    with open(os.path.join(args.dir, "SimulatorRootCA.der"), "rb") as handle:
        root = handle.read()
    client = AppStoreServerAPIClient(signing_key, apple_key["keyId"], apple_key["issuerId"], apple_app["storeId"],
                                     Environment.PRODUCTION)
    client._base_url = base  # the library has no public base-URL option
    verifier = SignedDataVerifier([root], False, Environment.PRODUCTION, apple_app["storeId"],
                                  apple_app["appAppleId"])
    refund = next(r for r in truth["appleRefunds"] if r["environment"] == "Production")
    history = client.get_refund_history(refund["originalTransactionId"], None)
    decoded = [verifier.verify_and_decode_signed_transaction(jws) for jws in history.signedTransactions]
    check("apple get_refund_history verifies with SignedDataVerifier",
          refund["transactionId"] in [d.transactionId for d in decoded])
    check("apple refund payload carries revocationDate and price",
          any(d.revocationDate == refund["revocationDate"] and d.price == refund["priceMilli"] for d in decoded))
    apple_subscription = next(s for s in subscriptions if s["platform"] == "apple" and s["environment"] == "Production")
    statuses = client.get_all_subscription_statuses(apple_subscription["storeId"])
    last = statuses.data[0].lastTransactions[0]
    check("apple get_all_subscription_statuses returns the true status",
          int(last.status) == apple_subscription["appleStatus"], last.status)
    renewal = verifier.verify_and_decode_renewal_info(last.signedRenewalInfo)
    check("apple renewal info verifies", renewal.originalTransactionId == apple_subscription["storeId"])
    request = NotificationHistoryRequest(startDate=now - 170 * 86_400_000, endDate=now,
                                         notificationType=NotificationTypeV2.REFUND)
    response = client.get_notification_history(None, request)
    notifications = [verifier.verify_and_decode_notification(item.signedPayload)
                     for item in response.notificationHistory]
    check("apple get_notification_history notifications verify",
          len(notifications) > 0 and all(n.notificationType == NotificationTypeV2.REFUND for n in notifications))
    try:
        client.get_refund_history("1999999999999999", None)
        check("apple unknown transaction fails", False)
    except APIException as error:
        check("apple unknown transaction raises APIException 4040010", error.raw_api_error == 4040010,
              str(error.raw_api_error))

    print(f"{len(FAILURES)} failed" if FAILURES else "all official-client checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
