"""The replicas' identity and what it may read: a service account of its own, read access to the weights
buckets of the fleet's regions and to the API key's secret, and write access to its metrics and logs."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_random as random

from gpuinfra.clouds.gcp.pulumi.base import opts

PROJECT_ROLES = ("roles/monitoring.metricWriter", "roles/logging.logWriter")
"""Writing the requests-in-flight gauge the autoscaler reads, and the VM's logs: nothing else project-wide."""


class FleetIdentity(pulumi.ComponentResource):
    def __init__(
        self, name: str, project: str, buckets: dict[str, str], labels: dict[str, str], parent: pulumi.Resource
    ) -> None:
        super().__init__("gpuinfra:inference:GcpIdentity", name, None, opts(parent))
        self.account = gcp.serviceaccount.Account(
            f"{name}-replicas", account_id=f"{name}-replicas"[:30], display_name=f"{name} replicas", opts=opts(self)
        )
        member = self.account.email.apply(lambda email: f"serviceAccount:{email}")
        for role in PROJECT_ROLES:
            gcp.projects.IAMMember(
                f"{name}-{role.split('/')[1]}", project=project, role=role, member=member, opts=opts(self)
            )
        self.buckets: dict[str, gcp.storage.Bucket] = {}
        for region, bucket in buckets.items():
            # The weights of this region: the release writes them; the replicas only read.
            self.buckets[region] = gcp.storage.Bucket(
                f"{name}-weights-{region}",
                name=bucket,
                location=region.upper(),
                uniform_bucket_level_access=True,
                public_access_prevention="enforced",
                versioning={"enabled": True},
                labels=labels,
                opts=opts(self, protect=True),
            )
            gcp.storage.BucketIAMMember(
                f"{name}-weights-{region}-read",
                bucket=self.buckets[region].name,
                role="roles/storage.objectViewer",
                member=member,
                opts=opts(self),
            )
        key = random.RandomPassword(f"{name}-api-key", length=48, special=False, opts=opts(self))
        self.secret = gcp.secretmanager.Secret(
            f"{name}-api-key",
            secret_id=f"{name}-api-key",
            replication={"auto": {}},
            labels=labels,
            opts=opts(self),
        )
        gcp.secretmanager.SecretVersion(
            f"{name}-api-key", secret=self.secret.id, secret_data=key.result, opts=opts(self)
        )
        gcp.secretmanager.SecretIamMember(
            f"{name}-api-key-read",
            secret_id=self.secret.secret_id,
            role="roles/secretmanager.secretAccessor",
            member=member,
            opts=opts(self),
        )
        self.register_outputs({"service_account": self.account.email})


__all__ = ["PROJECT_ROLES", "FleetIdentity"]
