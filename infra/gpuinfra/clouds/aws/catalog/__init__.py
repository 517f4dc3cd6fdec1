"""AWS's own catalog: EC2's quota codes per instance family and purchase (data/quotas.yaml), EKS's versions and node
releases (eks.py, data/eks.yaml), the regions PCS serves (pcs.py, data/pcs.yaml) and the account ELB delivers access
logs as per region (log_delivery.py, data/log_delivery.yaml), read once, each with its source; the instance types,
prices and power figures AWS shares with on premises stay in gpuinfra.catalog."""

from gpuinfra.clouds.aws.catalog.quotas import DATA_FILE, QuotaBook, QuotaCode, QuotaUnknown, quota_book

__all__ = ["DATA_FILE", "QuotaBook", "QuotaCode", "QuotaUnknown", "quota_book"]
