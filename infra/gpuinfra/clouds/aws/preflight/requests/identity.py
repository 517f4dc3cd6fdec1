"""IAM, KMS and Secrets Manager -> their API requests, following terraform-provider-aws internal/service/iam
(role.go, role_policy.go, role_policy_attachment.go, instance_profile.go), internal/service/kms (key.go,
alias.go) and internal/service/secretsmanager (secret.go)."""

from __future__ import annotations

from gpuinfra.clouds.aws.preflight.translate import AUTONAME, DROP, Call, F, json_doc, tag_list
from gpuinfra.graph import Resource

IAM = "iam"


def role(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(IAM, "CreateRole").put("RoleName", i.get("name", AUTONAME), "name")
    spec = {
        "name": DROP,
        "namePrefix": DROP,
        "assumeRolePolicy": F("AssumeRolePolicyDocument", json_doc),
        "forceDetachPolicies": DROP,
        "inlinePolicies": DROP,
        "managedPolicyArns": DROP,
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
    }
    calls = [call.fill(i, spec)]
    for n, policy in enumerate(i.get("inlinePolicies") or []):
        put = Call(IAM, "PutRolePolicy").put("RoleName", i.get("name", AUTONAME))
        put.put("PolicyName", policy.get("name"), f"inlinePolicies[{n}].name")
        calls.append(put.put("PolicyDocument", json_doc(policy.get("policy")), f"inlinePolicies[{n}].policy"))
    for n, arn in enumerate(i.get("managedPolicyArns") or []):
        attach = Call(IAM, "AttachRolePolicy").put("RoleName", i.get("name", AUTONAME))
        calls.append(attach.put("PolicyArn", arn, f"managedPolicyArns[{n}]"))
    return calls


def role_policy(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(IAM, "PutRolePolicy").put("PolicyName", i.get("name", AUTONAME), "name")
    spec = {"name": DROP, "namePrefix": DROP, "role": "RoleName", "policy": F("PolicyDocument", json_doc)}
    return [call.fill(i, spec)]


def role_policy_attachment(r: Resource) -> list[Call]:
    return [Call(IAM, "AttachRolePolicy").fill(r.inputs, {"role": "RoleName"})]


def instance_profile(r: Resource) -> list[Call]:
    i = r.inputs
    name = i.get("name", AUTONAME)
    create = Call(IAM, "CreateInstanceProfile").put("InstanceProfileName", name, "name")
    create.fill(i, {"name": DROP, "namePrefix": DROP, "role": DROP, "tags": F(convert=tag_list()), "tagsAll": DROP})
    if "role" not in i:
        return [create]
    add = Call(IAM, "AddRoleToInstanceProfile").put("InstanceProfileName", name).put("RoleName", i["role"], "role")
    return [create, add]


KMS = "kms"


def key(r: Resource) -> list[Call]:
    i = r.inputs
    spec = {
        "customerMasterKeySpec": "KeySpec",
        "policy": F(convert=json_doc),
        "tags": F(convert=tag_list("TagKey", "TagValue")),
        "tagsAll": DROP,
        "enableKeyRotation": DROP,
        "rotationPeriodInDays": DROP,
        "deletionWindowInDays": DROP,
        "isEnabled": DROP,
    }
    calls = [Call(KMS, "CreateKey").fill(i, spec)]
    if i.get("enableKeyRotation"):
        rotation = Call(KMS, "EnableKeyRotation").put("KeyId", AUTONAME)
        calls.append(rotation.put("RotationPeriodInDays", i.get("rotationPeriodInDays"), "rotationPeriodInDays"))
    if "deletionWindowInDays" in i:
        # key.go: on destroy the provider schedules deletion with this window.
        deletion = Call(KMS, "ScheduleKeyDeletion").put("KeyId", AUTONAME)
        calls.append(deletion.put("PendingWindowInDays", i["deletionWindowInDays"], "deletionWindowInDays"))
    return calls


def alias(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(KMS, "CreateAlias").put("AliasName", i.get("name", AUTONAME), "name")
    return [call.fill(i, {"name": DROP, "namePrefix": DROP})]


SECRETS = "secretsmanager"


def secret(r: Resource) -> list[Call]:
    i = r.inputs
    call = (
        Call(SECRETS, "CreateSecret").put("Name", i.get("name", AUTONAME), "name").put("ClientRequestToken", AUTONAME)
    )
    spec = {
        "name": DROP,
        "namePrefix": DROP,
        "replicas": F("AddReplicaRegions", fields={"region": "Region", "kmsKeyId": "KmsKeyId"}),
        "forceOverwriteReplicaSecret": "ForceOverwriteReplicaSecret",
        "policy": DROP,
        "recoveryWindowInDays": DROP,
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
    }
    calls = [call.fill(i, spec)]
    if "recoveryWindowInDays" in i and i["recoveryWindowInDays"] != 0:
        # secret.go: on destroy, DeleteSecret with this window (0 = ForceDeleteWithoutRecovery).
        delete = Call(SECRETS, "DeleteSecret").put("SecretId", AUTONAME)
        calls.append(delete.put("RecoveryWindowInDays", i["recoveryWindowInDays"], "recoveryWindowInDays"))
    if "policy" in i:
        put = Call(SECRETS, "PutResourcePolicy").put("SecretId", AUTONAME)
        calls.append(put.put("ResourcePolicy", json_doc(i["policy"]), "policy"))
    return calls


def secret_version(r: Resource) -> list[Call]:
    spec = {"secretId": "SecretId", "secretString": "SecretString", "secretBinary": "SecretBinary"}
    return [Call(SECRETS, "PutSecretValue").fill(r.inputs, spec)]


__all__ = [
    "alias",
    "instance_profile",
    "key",
    "role",
    "role_policy",
    "role_policy_attachment",
    "secret",
    "secret_version",
]
