"""The weights reach every serving region: the release writes the first region's bucket, and one Storage Transfer
Service cross-bucket replication job per other region copies each new or updated object to that region's bucket
(storagetransfer v1 TransferJob.replicationSpec: "copies new or updated objects from a source Cloud Storage bucket
to a destination Cloud Storage bucket"). The replicas wait for the copy (templates/gcp/startup.sh.j2), so a
region's roll waits for its weights.

What the job needs and refuses (cloud.google.com/storage/docs/using-cross-bucket-replication and
cloud.google.com/storage-transfer/docs/cross-bucket-replication):
- Storage Transfer Service's service agent holds `roles/storage.legacyBucketOwner` on the source bucket and
  `roles/storage.legacyBucketWriter` on the destination (what the console grants it);
- a replication job takes no custom name, and no delete option ("the request fails with an INVALID_ARGUMENT
  error"); deleting in the source is not replicated;
- objects already in the source when the job is created are not copied: the release writes after the stack."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.pulumi.base import opts

SOURCE_ROLE = "roles/storage.legacyBucketOwner"
SINK_ROLE = "roles/storage.legacyBucketWriter"


def transfer_agent(project: str, parent: pulumi.Resource) -> pulumi.Output[str]:
    """The project's Storage Transfer Service agent as an IAM member (read at deploy: storagetransfer
    googleServiceAccounts.get, which also creates it the first time)."""
    agent = gcp.storage.get_transfer_project_service_account_output(
        project=project, opts=pulumi.InvokeOutputOptions(parent=parent)
    )
    return agent.email.apply(lambda email: f"serviceAccount:{email}")


class WeightsReplication(pulumi.ComponentResource):
    """One replication job per region but the first, from the first region's bucket, after the agent's grants."""

    def __init__(
        self, name: str, project: str, buckets: dict[str, gcp.storage.Bucket], parent: pulumi.Resource
    ) -> None:
        super().__init__("gpuinfra:inference:GcpWeightsReplication", name, None, opts(parent))
        source_region, *regions = buckets
        source = buckets[source_region]
        member = transfer_agent(project, self)
        read = gcp.storage.BucketIAMMember(
            f"{name}-replication-source", bucket=source.name, role=SOURCE_ROLE, member=member, opts=opts(self)
        )
        self.jobs: dict[str, gcp.storage.TransferJob] = {}
        for region in regions:
            write = gcp.storage.BucketIAMMember(
                f"{name}-replication-{region}",
                bucket=buckets[region].name,
                role=SINK_ROLE,
                member=member,
                opts=opts(self),
            )
            self.jobs[region] = gcp.storage.TransferJob(
                f"{name}-to-{region}",
                description=f"{name}: weights {source_region} -> {region}",
                project=project,
                replication_spec={
                    "gcs_data_source": {"bucket_name": source.name},
                    "gcs_data_sink": {"bucket_name": buckets[region].name},
                    "transfer_options": {"overwrite_when": "DIFFERENT"},
                },
                status="ENABLED",
                opts=opts(self, depends_on=[read, write]),
            )
        self.source_region = source_region
        self.register_outputs({"source_region": source_region})


__all__ = ["SINK_ROLE", "SOURCE_ROLE", "WeightsReplication", "transfer_agent"]
