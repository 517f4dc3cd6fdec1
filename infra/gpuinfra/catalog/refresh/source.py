"""Where the public files are read from: AWS's own hosts, or a directory holding recorded excerpts under the same
relative paths (so a fixture is a copy of the real layout, and the code reading it is the code that reads AWS)."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from gpuinfra.errors import InputError

PRICING_HOST = "https://pricing.us-east-1.amazonaws.com"
"""The Price List bulk API's files (AWS Billing User Guide, "Getting price list files manually": the service index
is https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/index.json; no account or credentials are needed)."""
EC2_REGION_INDEX = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
"""AmazonEC2's service Region index file (the service index's `currentRegionIndexUrl` for AmazonEC2)."""
SPOT_ADVISOR_HOST = "https://spot-bid-advisor.s3.amazonaws.com"
SPOT_ADVISOR_FILE = "/spot-advisor-data.json"
"""The data behind the Spot Instance Advisor page (aws.amazon.com/ec2/spot/instance-advisor/), public on S3."""
TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class Source:
    """A recorded directory (`--from DIR`), or None: AWS's hosts over HTTPS."""

    directory: Path | None = None

    def where(self, host: str, path: str) -> str:
        return str(self.directory / path.lstrip("/")) if self.directory else host + path

    def exists(self, host: str, path: str) -> bool:
        """A recorded directory may hold an excerpt in either of AWS's formats; AWS serves both."""
        return self.directory is None or (self.directory / path.lstrip("/")).is_file()

    @contextmanager
    def open(self, host: str, path: str) -> Iterator[tuple[TextIO, str | None]]:
        """The file as a text stream (read as it arrives: EC2's regional CSV runs to hundreds of MB) and, from
        AWS, its Last-Modified header; from a directory, a `<file>.last-modified` file beside it records the
        header the excerpt was taken with (None without one)."""
        if self.directory is not None:
            local = self.directory / path.lstrip("/")
            stamp = local.with_name(local.name + ".last-modified")
            modified = stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else None
            try:
                handle = local.open(encoding="utf-8", newline="")
            except OSError as exc:
                raise InputError.single(
                    f"cannot read {local}: {exc.strerror or exc}",
                    file=local,
                    hint="--from names a directory laid out like AWS's hosts (see docs/catalog.md)",
                ) from exc
            with handle:
                yield handle, modified
            return
        url = host + path
        try:
            response = urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS)  # a fixed https host
        except (urllib.error.URLError, OSError) as exc:
            raise InputError.single(
                f"cannot fetch {url}: {exc}",
                hint="catalog refresh needs network access to AWS's public hosts, or --from a recorded directory",
            ) from exc
        with response:
            yield io.TextIOWrapper(response, encoding="utf-8", newline=""), response.headers.get("Last-Modified")

    def read_json(self, host: str, path: str) -> tuple[Any, str | None]:
        """A small JSON file (an index, the advisor data), parsed; a file that is not JSON is an input error."""
        with self.open(host, path) as (stream, modified):
            try:
                return json.load(stream), modified
            except ValueError as exc:
                raise InputError.single(f"{self.where(host, path)}: not JSON: {exc}") from exc


__all__ = ["EC2_REGION_INDEX", "PRICING_HOST", "SPOT_ADVISOR_FILE", "SPOT_ADVISOR_HOST", "Source"]
