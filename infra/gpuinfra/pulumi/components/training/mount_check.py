"""Is the checkpoint file system really mounted? One awk program over the mount table, run before anything writes
or deletes under it: by the on-premises trainer pods' init container and by the checkpoint pruner on every
substrate. An unmounted Lustre leaves its mount point an empty directory of the root disk (Kubernetes docs,
Volumes, hostPath type `Directory`: "A directory must exist at the given path", no file-system check), where
checkpoints would fill the node's disk and a pruner would prune the wrong tree (the review's finding T5).

/proc/mounts (proc(5): fields source, mount point, type, ...) is the mount table as the process sees it: in a pod,
the container's own mounts, a hostPath bind of a Lustre mount included. The source of a Lustre client mount is
`<nids>:/<fsname>` (lustre/utils/mount_lustre.c), so a site's file system is also checked by name."""

from __future__ import annotations

LUSTRE_MOUNTED = (
    '$2 == m && $3 == "lustre" && substr($1, length($1) - length(f) + 1) == f {ok = 1} '
    'END {if (!ok) print m " is not the Lustre file system " f > "/dev/stderr"; exit !ok}'
)
MOUNTS = "/proc/mounts"


def lustre_check_args(mount_path: str, fs_name: str = "") -> list[str]:
    """awk's arguments: `mount_path` must be a Lustre mount (of `fs_name`, when given) in the mount table; awk
    exits 1 and says so otherwise."""
    return ["-v", f"m={mount_path}", "-v", f"f=:/{fs_name}" if fs_name else "f=", LUSTRE_MOUNTED, MOUNTS]


__all__ = ["LUSTRE_MOUNTED", "MOUNTS", "lustre_check_args"]
