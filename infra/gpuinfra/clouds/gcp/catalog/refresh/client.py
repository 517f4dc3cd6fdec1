"""Where Google's catalog is read from: Google's APIs through google-api-python-client (its shipped Discovery
documents build the requests), or a directory of recorded responses laid out by the requests' own URLs, served to
the same client, so a recording is read by the code that reads Google.

The two APIs (their Discovery documents, as the client ships them):
- Cloud Billing Catalog, `services.skus.list`: GET https://cloudbilling.googleapis.com/v1/{parent}/skus, a
  ListSkusResponse `{skus: [Sku], nextPageToken}` (cloud.google.com/billing/docs/reference/rest/v1/services.skus/list);
  Compute Engine's service is `services/6F81-5844-456A` (research/multicloud.md section 5).
- Compute Engine, `machineTypes.aggregatedList`: GET https://compute.googleapis.com/compute/v1/projects/{project}/
  aggregated/machineTypes, a MachineTypeAggregatedList `{items: {"zones/<zone>": {machineTypes: [MachineType]}},
  nextPageToken}` (cloud.google.com/compute/docs/reference/rest/v1/machineTypes/aggregatedList).

A recorded directory holds `<host>/<path>.json` for a first page and `<host>/<path>.page-<pageToken>.json` for the
next ones, the token percent-encoded (the query's other parameters are not part of the name)."""

from __future__ import annotations

import json
import urllib.parse
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuinfra.errors import InputError

MAX_PAGES = 1000
"""A listing that pages on past this many pages is refused (a recording that loops on one token)."""


@dataclass(frozen=True)
class RecordedHttp:
    """An httplib2-shaped `request` serving the recorded response of each URL (404 when none was recorded)."""

    directory: Path

    def path_of(self, uri: str) -> Path:
        url = urllib.parse.urlsplit(uri)
        token = urllib.parse.parse_qs(url.query).get("pageToken", [""])[0]
        suffix = f".page-{urllib.parse.quote(token, safe='')}.json" if token else ".json"  # a token may hold "/"
        return self.directory / url.netloc / (url.path.strip("/") + suffix)

    def request(self, uri: str, method: str = "GET", body: object = None, headers: object = None, **_: object) -> Any:
        import httplib2

        path = self.path_of(uri)
        if method != "GET" or not path.is_file():
            return httplib2.Response({"status": "404"}), json.dumps(
                {"error": {"message": f"{path}: not recorded"}}
            ).encode()
        return httplib2.Response({"status": "200", "content-type": "application/json"}), path.read_bytes()


def service(api: str, version: str, recorded: Path | None) -> Any:
    """A client for `api` built from the Discovery document the client ships; recorded or Google's, with the
    Application Default Credentials (`gcloud auth application-default login`)."""
    with warnings.catch_warnings():  # google.api_core's notice about future Python versions, on every import
        warnings.simplefilter("ignore", FutureWarning)
        from googleapiclient import discovery

    if recorded is not None:
        return discovery.build(api, version, http=RecordedHttp(recorded), static_discovery=True, cache_discovery=False)
    try:
        import google.auth

        credentials, _ = google.auth.default()
    except Exception as exc:  # google.auth.exceptions.DefaultCredentialsError and the transport's own
        raise InputError.single(
            f"no Google credentials: {exc}",
            hint="run `gcloud auth application-default login`, or pass --from a recorded directory",
        ) from None
    return discovery.build(api, version, credentials=credentials, static_discovery=True, cache_discovery=False)


def pages(request: Any, where: str) -> Iterator[dict[str, Any]]:
    """Every page of a list request (its nextPageToken followed), each page a JSON object."""
    from googleapiclient.errors import HttpError

    token = None
    for _ in range(MAX_PAGES):
        try:
            page = request(pageToken=token).execute() if token else request().execute()
        except HttpError as exc:
            raise InputError.single(f"{where}: {exc.status_code} {exc.reason or ''}".strip()) from None
        except ValueError as exc:  # the body is not JSON
            raise InputError.single(f"{where}: the response is not JSON: {exc}") from None
        if not isinstance(page, dict):
            raise InputError.single(f"{where}: a page is not a JSON object")
        yield page
        token = page.get("nextPageToken")
        if not token:
            return
    raise InputError.single(f"{where}: more than {MAX_PAGES} pages (nextPageToken never ends)")


__all__ = ["RecordedHttp", "pages", "service"]
