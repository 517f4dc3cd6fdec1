"""Where a stack's alarms go: an SNS topic subscribed by the account's `alerts` (organization file), the one target
of every alarm that pages, in training, fine-tuning and inference stacks alike.

The topic policy lets CloudWatch (alarm actions) and EventBridge (rule targets) publish for this account only (SNS
Developer Guide, "Amazon SNS access policy": aws:SourceAccount; EventBridge User Guide, "Permissions for Amazon SNS":
a target topic's policy must allow events.amazonaws.com). Subscriptions are the organization's: email addresses and
an https webhook (SNS Developer Guide, "Subscribing to a topic"); each email address confirms once.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuinfra.spec.org import Alerts

PUBLISHERS = ("cloudwatch.amazonaws.com", "events.amazonaws.com")


def topic_policy(account_id: str, topic_arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "AlarmsAndEventsPublish",
                    "Effect": "Allow",
                    "Principal": {"Service": list(PUBLISHERS)},
                    "Action": "sns:Publish",
                    "Resource": topic_arn,
                    "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
                }
            ],
        },
        sort_keys=True,
    )


def alert_topic(name: str, account_id: str, alerts: Alerts | None, o: pulumi.ResourceOptions) -> aws.sns.Topic:
    """The topic (`<name>-topic`), its policy and one subscription per address of `alerts`. SNS topics and the
    alarms that notify them live in one region: call it once per region with that region's provider."""
    topic = aws.sns.Topic(f"{name}-topic", opts=o)
    aws.sns.TopicPolicy(
        f"{name}-topic-policy",
        arn=topic.arn,
        policy=topic.arn.apply(lambda arn: topic_policy(account_id, arn)),
        opts=o,
    )
    for i, address in enumerate(alerts.email if alerts else []):
        aws.sns.TopicSubscription(f"{name}-email-{i}", topic=topic.arn, protocol="email", endpoint=address, opts=o)
    if alerts and alerts.webhook_url:
        aws.sns.TopicSubscription(
            f"{name}-webhook", topic=topic.arn, protocol="https", endpoint=alerts.webhook_url, opts=o
        )
    return topic


def notify(topic_arn: pulumi.Input[str] | None) -> dict[str, Any]:
    """A paging alarm's actions: the topic on ALARM and on OK (the page and its all-clear), none without a topic
    (its state then shows in the console and the API only)."""
    actions = [topic_arn] if topic_arn is not None else []
    return {"actions_enabled": bool(actions), "alarm_actions": actions, "ok_actions": actions}


__all__ = ["PUBLISHERS", "alert_topic", "notify", "topic_policy"]
