"""The fine-tuning stack: an AWS Batch queue of one-node GPU jobs in a training account."""
