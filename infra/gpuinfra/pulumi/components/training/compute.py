"""What every training node group shares, whoever launches it (AWS PCS for Slurm, EKS for Kubernetes): the
capacity spec, the interfaces per network card, the market options, and the least-privilege node policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components import iam


@dataclass(frozen=True)
class CapacityArgs:
    type: str
    """on_demand, spot, capacity_reservation or capacity_block."""
    on_demand_base: int = 0
    capacity_reservation_id: str | None = None


@dataclass(frozen=True)
class ComputeArgs:
    cluster: str
    region: str
    account_id: str
    instance_type: str
    image_id: str
    node_count: int
    efa_interfaces: int
    """0 when the cluster runs without EFA."""
    capacity: CapacityArgs
    root_volume_gib: int
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    user_data: pulumi.Input[str]
    dataset_uri: str | None
    checkpoint_uri: str
    registry_upload: tuple[str, str, str, str] | None
    """(bucket, prefix, account id, region) of the model registry's upload prefix."""
    tags: dict[str, str]


def efa_interface_specs(count: int) -> list[dict[str, Any]]:
    """One EFA per network card: card 0 carries the primary (EFA with ENA, device 0); the others are
    EFA-only interfaces at device index 1, which take no IP address."""
    return [
        {
            "network_card_index": card,
            "device_index": 0 if card == 0 else 1,
            "interface_type": "efa" if card == 0 else "efa-only",
        }
        for card in range(count)
    ]


def node_policy(args: ComputeArgs, kms_key_arn: str) -> str:
    """The node statements as one policy document."""
    return iam.document(*node_statements(args, kms_key_arn))


def node_statements(args: ComputeArgs, kms_key_arn: str) -> list[iam.Statement]:
    """Read the dataset prefix, write the checkpoint prefix (and the registry's upload prefix), use the
    cluster key."""
    ckpt_bucket, ckpt_prefix = _split(args.checkpoint_uri)
    statements: list[iam.Statement] = [
        *iam.s3_write("Checkpoints", ckpt_bucket, ckpt_prefix),
        iam.kms_use("ClusterKey", kms_key_arn),
    ]
    if args.dataset_uri:
        statements[:0] = iam.s3_read("Dataset", *_split(args.dataset_uri))
    if args.registry_upload:
        bucket, prefix, account, region = args.registry_upload
        statements += [
            *iam.s3_write("RegistryUpload", bucket, prefix, read_back=False),
            iam.kms_via_s3("RegistryKey", account, region),
        ]
    return statements


def _split(uri: str) -> tuple[str, str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, prefix


class TrainingCompute:
    """Launch settings the node groups share (PCS compute node groups here, EKS node groups in eks.py): the
    interfaces per network card and the market options of the capacity type."""

    @staticmethod
    def interface_specs(efa_interfaces: int) -> list[dict[str, Any]]:
        """EFA on every card, or one plain interface when the cluster runs without EFA."""
        return efa_interface_specs(efa_interfaces) or [
            {"network_card_index": 0, "device_index": 0, "interface_type": "interface"}
        ]

    @staticmethod
    def market_options(args: ComputeArgs) -> dict[str, Any]:
        """The launch template's reservation options for the capacity type (reservation_options)."""
        if args.capacity.type not in ("capacity_block", "capacity_reservation"):
            return {}
        return reservation_options(args.capacity.capacity_reservation_id, args.capacity.type == "capacity_block")


def reservation_options(reservation_id: str | None, block: bool) -> dict[str, Any]:
    """Launch template options for nodes launched into a reservation; both None without one. A Capacity Block is
    launched from the template's reservation with market type capacity-block (EC2 User Guide, "Launch instances into
    Capacity Blocks"); an On-Demand Capacity Reservation from the template's reservation target alone, as on-demand
    (EC2 User Guide, "Launch instances into an existing Capacity Reservation"). A PCS node group takes either
    through its launch template (AWS PCS User Guide, "Using ODCRs with AWS PCS", direct association; "Configure an
    AWS PCS compute node group to use a Capacity Block"), a managed node group too (the EKS Blueprints'
    targeted-ODCR pattern: aws-ia/terraform-aws-eks-blueprints patterns/targeted-odcr)."""
    if reservation_id is None:
        return {"instance_market_options": None, "capacity_reservation_specification": None}
    return {
        "instance_market_options": aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block")
        if block
        else None,
        "capacity_reservation_specification": aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=reservation_id
            )
        ),
    }


__all__ = [
    "CapacityArgs",
    "ComputeArgs",
    "TrainingCompute",
    "efa_interface_specs",
    "node_policy",
    "node_statements",
    "reservation_options",
]
