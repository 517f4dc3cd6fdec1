"""Views of report objects as sections and phrases people read (terminal and Markdown): shared by the builders,
which put them into a stack's summary, and the renderers of the cost and diff reports."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.report.format import money, number
from gpuinfra.report.model import (
    CatalogDetailOut,
    CatalogReport,
    CatalogTypeOut,
    CostOut,
    CostReport,
    Section,
)

MAX_ROWS = 60
"""Cost lines shown in the section (largest first); the JSON has them all."""


def as_of_text(oldest: object, newest: object) -> str:
    if oldest is None:  # no price used, or only prices whose source gives no date
        return "no dated catalog prices"
    return f"prices as of {oldest}" if oldest == newest or newest is None else f"prices as of {oldest} to {newest}"


def total_text(monthly: Decimal, low: Decimal, high: Decimal, partial: bool = False) -> str:
    """A monthly total; a partial one (a line's price unknown) is a lower bound and says so: "at least"."""
    bound = "at least " if partial else ""
    text = f"{bound}{money(monthly)}/month"
    text = text if low == high else f"{text} (range {bound}{money(low)} to {bound}{money(high)})"
    return f"{text} (partial: a price is unknown)" if partial else text


def cost_section(cost: CostOut) -> Section:
    """The cost breakdown as a table: one row per line, largest first, unknown lines last."""
    rows = []
    for r in cost.resources:
        for line in r.lines:
            flags = ", ".join(line.flags)
            rows.append(
                (
                    line.monthly_usd is None,
                    -(line.monthly_usd or 0),
                    [
                        r.name,
                        line.name,
                        "-" if line.quantity is None else number(float(line.quantity), 2),
                        line.unit,
                        money(line.hourly_usd, 4),
                        money(line.monthly_usd),
                        flags,
                    ],
                )
            )
    rows.sort(key=lambda row: (row[0], row[1], row[2][0], row[2][1]))
    shown = [row[2] for row in rows[:MAX_ROWS]]
    notes = [
        f"total {total_text(cost.monthly_usd, cost.monthly_min_usd, cost.monthly_max_usd, cost.partial)}, "
        f"{'at least ' if cost.partial else ''}{money(cost.hourly_usd, 2)}/hour; "
        f"{as_of_text(cost.prices_as_of, cost.prices_as_of_newest)}; "
        f"{cost.free_resources} resources have no charge of their own"
    ]
    if len(rows) > MAX_ROWS:
        notes.append(f"{len(rows) - MAX_ROWS} smaller lines not shown (see --format json)")
    if cost.partial:
        notes.append(
            f"partial: {len(cost.unknown_prices)} with no price (unknown, not zero; the totals are lower bounds): "
            + "; ".join(cost.unknown_prices[:5])
            + (" ..." if len(cost.unknown_prices) > 5 else "")
        )
    if cost.unpriced:
        notes.append(
            f"{len(cost.unpriced)} unpriced (unknown, not in the total): "
            + "; ".join(cost.unpriced[:5])
            + (" ..." if len(cost.unpriced) > 5 else "")
        )
    if cost.doubtful:
        notes.append(
            f"{len(cost.doubtful)} doubtful figures (flagged): "
            + "; ".join(cost.doubtful[:5])
            + (" ..." if len(cost.doubtful) > 5 else "")
        )
    return Section(
        title=f"Cost: {total_text(cost.monthly_usd, cost.monthly_min_usd, cost.monthly_max_usd, cost.partial)}, "
        f"{as_of_text(cost.prices_as_of, cost.prices_as_of_newest)}",
        columns=["resource", "line", "quantity", "unit", "hourly", "monthly", "flags"],
        rows=shown,
        notes=notes,
    )


def cost_blocks(report: CostReport) -> list[tuple[str, list[Section]]]:
    blocks = []
    for s in report.stacks:
        sections = (
            [cost_section(s.cost)]
            if s.cost
            else [Section(title="Not priced", notes=["the stack has no graph: an error finding stopped the preview"])]
        )
        if s.notes:
            sections.append(Section(title="Notes", notes=s.notes))
        blocks.append((f"{s.stack}  ({s.source})", sections))
    return blocks


def _gib(mib: int) -> str:
    return number(mib / 1024, 1)


def _accelerators(t: CatalogTypeOut) -> str:
    if not t.accelerator:
        return "-"
    if not t.accelerator_count:
        return f"{t.accelerator} slice {_gib(t.accelerator_memory_mib)} GiB"
    return f"{t.accelerator_count} x {t.accelerator} {_gib(t.accelerator_memory_mib)} GiB"


def _network(t: CatalogTypeOut) -> str:
    burst = t.network_burst_gbps
    base = number(t.network_baseline_gbps, 3)
    return base if burst is None or burst == t.network_baseline_gbps else f"{base} (up to {number(burst, 3)})"


def _discount(value: Decimal | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def catalog_types_section(report: CatalogReport) -> Section:
    """The type list; filtered by region, the price shown is that region's own (with its date), not the cheapest."""
    filters = ", ".join(f"{k} {v}" for k, v in report.filters.items())
    region = report.filters.get("region")
    price = [f"{region} $/h", "as of"] if region else ["from $/h"]
    return Section(
        title=f"Instance types: {len(report.types)}" + (f" ({filters})" if filters else ""),
        columns=["type", "role", "accelerators", "vCPU", "memory GiB", "EFA / cards", "Gbps", "regions", *price],
        rows=[
            [
                t.name,
                t.role or "-",
                _accelerators(t),
                str(t.vcpu),
                str(t.memory_gib),
                f"{t.efa_interfaces} / {t.network_cards}",
                _network(t),
                str(t.regions_priced),
                *(
                    [money(t.region_on_demand_usd, 4), str(t.region_on_demand_as_of or "-")]
                    if region
                    else [money(t.on_demand_min_usd, 4)]
                ),
            ]
            for t in report.types
        ],
        notes=[
            "regions: regions with an on-demand price; "
            + (f"{region} $/h: the on-demand price in {region}" if region else "from: the cheapest of them")
            + " (`gpuinfra catalog TYPE` lists every region)"
        ],
    )


def catalog_detail_sections(d: CatalogDetailOut) -> list[Section]:
    t = d.type
    efa = ", ".join(map(str, t.efa_cards)) or "none"
    hardware = Section(
        title=f"{t.name} ({t.family}, {t.role or 'no role'}; {t.source}, as of {t.as_of or 'undated'})",
        rows=[
            ["accelerators", _accelerators(t) + (f", label {t.gpu_product}" if t.gpu_product else "")],
            ["vCPU / memory", f"{t.vcpu} / {t.memory_gib} GiB"],
            ["instance store", f"{t.instance_store_gb} GB" if t.instance_store_gb else "none (EBS only)"],
            ["network Gbps", _network(t)],
            ["network cards", f"{t.network_cards} ({t.max_interfaces} interfaces), EFA on cards {efa}"],
            ["capacity blocks", "sold as Capacity Blocks" if t.capacity_blocks else "no"],
        ],
    )
    rows: list[list[str]] = []
    notes = [
        "spot: the mean over the region's zones and the range from the dearest zone ('-': a zone without a spot "
        "offer) to the cheapest; the dataset gives min, mean and max, not a median",
        f"spot in a region without a row: {_discount(d.spot_default_discount)} off (an estimate, flagged so)",
        "spot interruption: the Spot Instance Advisor's band of capacity reclaimed over the trailing month, with "
        "the advisor data's date ('-': none in the catalog; `gpuinfra catalog refresh` reads it)",
    ]
    for p in d.prices:
        s = p.spot
        rows.append(
            [
                p.region,
                money(p.on_demand_usd, 4),
                str(p.on_demand_as_of or "-"),
                money(s.mean_usd, 4) if s else "-",
                f"{_discount(s.mean_discount)} ({_discount(s.low_discount)} to {_discount(s.high_discount)})"
                if s
                else "-",
                str(s.as_of) if s else "-",
                f"{p.interruption_band} ({p.interruption_as_of})" if p.interruption_band else "-",
                money(p.capacity_block_usd, 4) if t.capacity_blocks else "",
            ]
        )
        block = f"capacity block rate unknown: {p.capacity_block_note}" if p.capacity_block_note else None
        if block and block not in notes:
            notes.append(block)
    if not d.prices:
        blocks = ": sold as Capacity Blocks" if t.capacity_blocks else ""
        notes.insert(0, f"no region lists an on-demand price{blocks}")
    prices = Section(
        title=f"Prices by region (USD per hour): {len(d.prices)} regions",
        columns=[
            "region",
            "on-demand",
            "as of",
            "spot (mean)",
            "spot discount mean (range over zones)",
            "as of",
            "spot interruption",
            "capacity block",
        ],
        rows=rows,
        notes=notes,
    )
    quotas = Section(
        title="EC2 quotas (vCPUs per region)",
        columns=["purchase", "scope", "code", "name"],
        rows=[[q.purchase, q.scope, q.code or "unknown", q.name or q.reason or ""] for q in d.quotas],
    )
    return [hardware, prices, quotas]


def catalog_blocks(report: CatalogReport) -> list[tuple[str, list[Section]]]:
    """What the terminal and Markdown show: the type list, the region list or one type, then the sources."""
    if report.detail is not None:
        sections = catalog_detail_sections(report.detail)
    elif report.regions:
        sections = [
            Section(
                title=f"Regions: {len(report.regions)}",
                columns=["region", "types priced"],
                rows=[[r.region, str(r.types_priced)] for r in report.regions],
            )
        ]
    else:
        sections = [catalog_types_section(report)]
    sources = Section(
        title="Sources",
        columns=["id", "date", "title"],
        rows=[[s.id, str(s.date or "undated"), f"{s.title} <{s.url}>"] for s in report.sources],
    )
    return [("gpuinfra catalog", [*sections, sources])]


__all__ = [
    "MAX_ROWS",
    "as_of_text",
    "catalog_blocks",
    "catalog_detail_sections",
    "catalog_types_section",
    "cost_blocks",
    "cost_section",
    "total_text",
]
