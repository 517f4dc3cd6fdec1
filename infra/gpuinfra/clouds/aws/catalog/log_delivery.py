"""The AWS account Elastic Load Balancing delivers Application Load Balancer access logs as, per region, from
data/log_delivery.yaml here (cited; the ELB guide gives no date): the principal an access-log bucket's policy grants
s3:PutObject, and the one cross-account grant the pack lets a log bucket carry. The registry names it as AWS's
`log_delivery` part, so the shared readers (gpuinfra.graph.log_delivery, the pack's grant rule) never name this
package; the file is checked against the shared catalog's sources (sources.yaml) when it is first read."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Annotated

from gpuinfra.catalog import CatalogError, load_catalog
from gpuinfra.catalog.load import source_problems
from gpuinfra.catalog.models import UndatedEntry
from pydantic import StringConstraints, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

DATA_FILE = Path(__file__).parent / "data" / "log_delivery.yaml"


class ElbLogAccounts(UndatedEntry):
    """The AWS-owned account ELB acts as per region when it writes ALB access logs (regions available before August
    2022; a region opened since has none: ELB's service principal delivers there)."""

    accounts: dict[str, Annotated[str, StringConstraints(pattern=r"^[0-9]{12}$")]]

    def account(self, region: str) -> str | None:
        """ELB's log-delivery account in `region`; None for a region the table lists none for (service principal)."""
        return self.accounts.get(region)


def read_accounts(path: Path = DATA_FILE) -> ElbLogAccounts:
    """The file's table, checked as the shared loader checks its own files: well-formed (twelve-digit accounts), and
    citing a source sources.yaml lists, with that source's date (none: the ELB guide gives none)."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        accounts = ElbLogAccounts.model_validate(data["elb_log_accounts"])
    except (ValidationError, KeyError, TypeError, OSError, YAMLError) as exc:
        raise CatalogError(f"bundled catalog is invalid: {path.name}: {exc}") from exc
    found = list(source_problems([accounts], load_catalog().sources))
    if found:
        raise CatalogError(f"bundled catalog is inconsistent: {path.name}:\n  " + "\n  ".join(found))
    return accounts


@cache
def elb_log_accounts() -> ElbLogAccounts:
    """The bundled table, read and checked once per process (the catalog never changes at run time)."""
    return read_accounts()


__all__ = ["DATA_FILE", "ElbLogAccounts", "elb_log_accounts", "read_accounts"]
