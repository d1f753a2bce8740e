#!/usr/bin/env python3
"""The reference for the bench's `verify` figure: Apple's official app-store-server-library verifying and
decoding signed refund transactions with its SignedDataVerifier (offline checks, trusting the simulator's root).

Fetches the refund history of the scenario's refunded customers from a running storesim with the library's own
AppStoreServerAPIClient (untimed), until --payloads signed transactions are in hand, then times
verify_and_decode_signed_transaction over all of them. Prints one JSON line: {"payloads", "seconds", "rate"}.
With --save FILE the payloads are also written there, one JWS a line, so storerecon can be timed on the same ones.
Usage: apple_verify.py --dir DIR --url URL [--payloads 3000] [--save FILE]
"""
import argparse
import json
import os
import sys
import time

import requests
from appstoreserverlibrary.api_client import AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--payloads", type=int, default=3000)
    parser.add_argument("--save")
    args = parser.parse_args()

    def read(name, mode="r"):
        with open(os.path.join(args.dir, name), mode) as handle:
            return handle.read()

    spec = json.loads(read("scenario.json"))
    app = next(app for app in spec["apps"] if app["platform"] == "apple")
    key = json.loads(read("apple-key.json"))
    client = AppStoreServerAPIClient(read(key["privateKeyFile"], "rb"), key["keyId"], key["issuerId"],
                                     app["storeId"], Environment.PRODUCTION)
    client._base_url = args.url  # the library has no public base-URL option
    truth = requests.get(f"{args.url}/admin/truth/refunds", timeout=60).json()
    customers = list(dict.fromkeys(refund["originalTransactionId"] for refund in truth["appleRefunds"]
                                   if refund["environment"] == "Production"))
    payloads = []
    for customer in customers:
        revision = None
        while len(payloads) < args.payloads:
            page = client.get_refund_history(customer, revision)
            payloads += page.signedTransactions or []
            if not page.hasMore:
                break
            revision = page.revision
        if len(payloads) >= args.payloads:
            break
    if not payloads:
        sys.exit("no refund payloads fetched")
    if args.save:
        with open(args.save, "w") as handle:
            handle.write("\n".join(payloads) + "\n")

    verifier = SignedDataVerifier([read("SimulatorRootCA.der", "rb")], False, Environment.PRODUCTION,
                                  app["storeId"], app.get("appAppleId"))
    verifier.verify_and_decode_signed_transaction(payloads[0])
    started = time.perf_counter()
    refunded = 0
    for jws in payloads:
        if verifier.verify_and_decode_signed_transaction(jws).revocationDate is not None:
            refunded += 1
    seconds = time.perf_counter() - started
    if refunded != len(payloads):
        sys.exit(f"{len(payloads) - refunded} payloads decoded without a revocationDate")
    print(json.dumps({"payloads": len(payloads), "seconds": seconds, "rate": len(payloads) / seconds}))


if __name__ == "__main__":
    main()
