"""Shared /home for a Slurm cluster on AWS: an encrypted EFS file system, a mount target in every subnet the nodes
use, and a security group whose one rule admits NFS (TCP 2049) from the nodes' group.

Slurm needs the same users, with the same home, on every node (SchedMD/slurm doc/html/quickstart_admin.shtml: a
uniform UID/GID space; AWS's PCS getting-started recipe mounts EFS on /home for the same reason). A mount target
serves clients in its own Availability Zone, so every node subnet gets one (Amazon EFS User Guide, "Creating and
managing mount targets"); NFS reaches it on TCP 2049 from the clients' security group (Amazon EFS User Guide, "Using
VPC security groups"). Storage is encrypted at rest with the AWS-managed key aws/elasticfilesystem: home
directories hold no data a customer key would guard better, and no key policy has to name the nodes."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.base import child
from gpuinfra.pulumi.components.training.bootstrap import HOME

TYPE = "gpuinfra:training:Home"
NFS_PORT = 2049
MOUNT_OPTIONS = "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev"
"""The options the Amazon EFS User Guide recommends for mounting with the NFS client ("Mounting EFS file systems
using NFS": nfsvers=4.1, rsize/wsize 1 MiB, hard, timeo=600, retrans=2, noresvport), plus _netdev (a network file
system, mounted once the network is up)."""


class SharedHome(pulumi.ComponentResource):
    file_system: aws.efs.FileSystem
    security_group: aws.ec2.SecurityGroup
    mount_targets: list[aws.efs.MountTarget]
    backup_policy: aws.efs.BackupPolicy

    def __init__(
        self,
        name: str,
        vpc_id: pulumi.Input[str],
        subnet_ids: Sequence[pulumi.Input[str]],
        client_group_id: pulumi.Input[str],
        tags: dict[str, str],
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        self.file_system = aws.efs.FileSystem(
            f"{name}-fs",
            encrypted=True,
            performance_mode="generalPurpose",
            # Bursting: no throughput charge; a home directory's small, spiky traffic stays within its credits.
            throughput_mode="bursting",
            tags={**tags, "Name": f"{name} /home"},
            opts=o,
        )
        self.security_group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=vpc_id,
            description="EFS /home mount targets: NFS from the cluster nodes only",
            ingress=[
                aws.ec2.SecurityGroupIngressArgs(
                    protocol="tcp",
                    from_port=NFS_PORT,
                    to_port=NFS_PORT,
                    security_groups=[client_group_id],
                    description="NFS from the cluster nodes",
                )
            ],
            opts=o,
        )
        self.mount_targets = [
            aws.efs.MountTarget(
                f"{name}-mt-{n}",
                file_system_id=self.file_system.id,
                subnet_id=subnet,
                security_groups=[self.security_group.id],
                opts=o,
            )
            for n, subnet in enumerate(subnet_ids)
        ]
        # Daily AWS Backup backups, kept 35 days in the default vault: a file system created through the API has
        # them off unless asked (Amazon EFS User Guide, "Backing up EFS file systems"; review finding T17).
        self.backup_policy = aws.efs.BackupPolicy(
            f"{name}-backup",
            file_system_id=self.file_system.id,
            backup_policy=aws.efs.BackupPolicyBackupPolicyArgs(status="ENABLED"),
            opts=o,
        )
        self.register_outputs({"file_system_id": self.file_system.id, "dns_name": self.file_system.dns_name})


__all__ = ["HOME", "MOUNT_OPTIONS", "NFS_PORT", "TYPE", "SharedHome"]  # HOME: bootstrap's, where homes are
