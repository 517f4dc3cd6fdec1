"""SageMaker endpoint configurations are counted at their most instances (graph/sagemaker.py): a variant's
initialInstanceCount, managed scaling's maxInstanceCount, or an Application Auto Scaling target's maxCapacity,
whichever is largest; a serverless variant launches none. The catalog has no SageMaker hosting price, so each
line carries its count and no price, and the stack's total is partial (a lower bound), never the instances at zero."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.catalog import load_catalog
from gpuinfra.cost.pricing import price_graph
from gpuinfra.graph.sagemaker import ENDPOINT_CONFIGURATION, SCALABLE_TARGET
from helpers import example_graph
from policy_helpers import planted

CONFIG = {
    "productionVariants": [
        {
            "variantName": "AllTraffic",
            "modelName": "llama",
            "instanceType": "ml.g5.12xlarge",
            "initialInstanceCount": 2,
            "managedInstanceScaling": {"status": "ENABLED", "minInstanceCount": 1, "maxInstanceCount": 6},
        },
        {
            "variantName": "Serverless",
            "modelName": "small",
            "serverlessConfig": {"maxConcurrency": 5, "memorySizeInMb": 2048},
        },
    ],
    "shadowProductionVariants": [
        {"variantName": "Shadow", "modelName": "llama-next", "instanceType": "ml.g5.xlarge", "initialInstanceCount": 1}
    ],
}
TARGET = {
    "serviceNamespace": "sagemaker",
    "scalableDimension": "sagemaker:variant:DesiredInstanceCount",
    "resourceId": "endpoint/chat/variant/AllTraffic",
    "minCapacity": 2,
    "maxCapacity": 8,
}


def test_an_endpoint_is_counted_at_its_most_instances_and_its_total_is_partial() -> None:
    graph = planted(example_graph("chat-serve"), ENDPOINT_CONFIGURATION, "chat-endpoint-config", CONFIG)
    graph = planted(graph, SCALABLE_TARGET, "chat-endpoint-scaling", TARGET)
    breakdown = price_graph(graph, load_catalog())
    (cost,) = [r for r in breakdown.resources if r.type == ENDPOINT_CONFIGURATION]
    counts = {line.name: line.quantity for line in cost.lines}
    # By hand: AllTraffic max(initial 2, managed 6, target 8) = 8; Shadow 1; the serverless variant none.
    assert counts == {
        "Instances (AllTraffic, ml.g5.12xlarge, at most)": Decimal(8),
        "Instances (Shadow, ml.g5.xlarge, at most)": Decimal(1),
    }, counts
    assert all(line.price_unknown for line in cost.lines)
    assert breakdown.partial
    assert not price_graph(example_graph("chat-serve"), load_catalog()).partial  # the example alone is fully priced
