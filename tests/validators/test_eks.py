"""EKS rules: the version's support window against the run, a pinned node image release, no ignored image.
Dates are the EKS release calendar's (awsdocs/amazon-eks-user-guide kubernetes-versions.adoc at 01385604):
1.33 standard support to 2026-07-29 and extended to 2027-07-29; 1.31 extended support ended 2026-11-26.
Extended support bills $0.60 per cluster-hour against $0.10 standard (AWS Containers blog, EKS extended support
pricing). Messages that depend on today's date are checked against dates computed here."""

from __future__ import annotations

import datetime

import pytest
from helpers import DELETE, Case, run_case

TODAY = datetime.datetime.now(datetime.UTC).date()
STANDARD_1_33_END = datetime.date(2026, 7, 29)
EXTENDED_1_33_END = datetime.date(2027, 7, 29)

CASES = [
    Case(
        "image-ignored-on-eks",
        "llm-train-eks",
        {"compute.image_id": "ami-0123456789abcdef0"},
        message="not used on EKS",
    ),
    Case("image-ignored-on-eks", "llm-train-eks", fires=False),
    Case(
        "eks-node-release-unknown",
        "llm-train-eks",
        {"scheduler.kubernetes_version": "1.29"},  # dated by the calendar; no AL2023 release in v20260714
        message="no EKS-optimized AL2023 AMI release is pinned for Kubernetes 1.29",
    ),
    Case("eks-node-release-unknown", "llm-train-eks", fires=False),
    Case(
        "eks-standard-support-ends",
        "llm-train-eks",
        {"scheduler.kubernetes_version": "1.36"},  # an AMI release, but no support dates in the catalog
        message=r"Kubernetes 1.36 has no EKS support dates in the catalog.*\$0\.60/hour",
    ),
    # 1.31's extended support ended 2026-11-26, before any day these tests run on.
    Case(
        "eks-version-ended",
        "llm-train-eks",
        {"scheduler.kubernetes_version": "1.31"},
        message="EKS ended support for Kubernetes 1.31 on 2026-11-26",
    ),
    Case("eks-version-ended", "llm-train-eks", fires=False),
    Case(
        "job-code-not-delivered",
        "llm-train-eks",
        {"lustre.code_path": DELETE},
        message="nothing puts /fsx/code/train.py on Lustre",
    ),
    Case(
        "job-code-not-delivered",
        "llm-train-eks",
        {"job.script": "train.py"},
        message="job.script train.py is not under code/",
    ),
    Case("job-code-not-delivered", "llm-train-eks", fires=False),
    # EKS only (the date-bound passing case on EKS is below): PCS has no Kubernetes control plane.
    Case("eks-standard-support-ends", "llm-train", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)


@pytest.mark.skipif(not (STANDARD_1_33_END <= TODAY < EXTENDED_1_33_END - datetime.timedelta(days=30)), reason="dates")
def test_a_version_past_standard_support_warns_with_both_rates_and_the_upgrade_date() -> None:
    run_case(
        Case(
            "eks-standard-support-ends",
            "llm-train-eks",
            message=r"Kubernetes 1\.33 left standard support on 2026-07-29: the control plane bills \$0\.60/hour "
            r"\(extended support\) instead of \$0\.10/hour; EKS upgrades it after 2027-07-29",
        )
    )


@pytest.mark.skipif(not (STANDARD_1_33_END <= TODAY < EXTENDED_1_33_END), reason="dates")
def test_a_run_that_outlasts_extended_support_meets_the_forced_upgrade() -> None:
    days = (EXTENDED_1_33_END - TODAY).days + 1
    run_case(
        Case(
            "eks-standard-support-ends",
            "llm-train-eks",
            {"job.run_days": days},
            message=r"extended support ends 2027-07-29, within the run, after which EKS upgrades the control plane",
        )
    )


@pytest.mark.skipif(datetime.date(2027, 3, 27) <= TODAY, reason="dates")
def test_standard_support_ending_within_the_run_warns() -> None:
    # 1.35: standard support to 2027-03-27 (endoflife.date, 14 months after its EKS release of 2026-01-27).
    days = (datetime.date(2027, 3, 27) - TODAY).days + 10
    run_case(
        Case(
            "eks-standard-support-ends",
            "llm-train-eks",
            {"scheduler.kubernetes_version": "1.35", "job.run_days": days},
            message=rf"Kubernetes 1\.35 leaves standard support on 2027-03-27, within the {days}-day run",
        )
    )
    run_case(Case("eks-standard-support-ends", "llm-train-eks", {"scheduler.kubernetes_version": "1.35"}, fires=False))
