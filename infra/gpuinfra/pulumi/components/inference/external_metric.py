"""The external metric an `autoscaler: hpa` fleet scales on, and the prometheus-adapter rule that serves it.

An autoscaling/v2 HPA reads an External metric by name; prometheus-adapter serves each name from one `externalRules`
entry, one query per name, and its rules must be mutually exclusive (prometheus-adapter docs/config.md; the
External-metric requests carry the HPA's selector and namespace as `<<.LabelMatchers>>`, docs/externalmetrics.md).
So each engine has a metric of its own, summing that engine's own waiting and running gauges (catalog
engines.yaml): one name for every engine would make an SGLang or TensorRT-LLM fleet read vLLM's series, which its
pods never export, and a cluster serving two engines could not have both rules."""

from __future__ import annotations

from typing import Any

from gpuinfra.catalog.engines import Engine

METRIC_LABEL = "app_kubernetes_io_name"
"""The series label the PodMonitor's podTargetLabels copies from the pod label (Prometheus sanitizes names)."""


def external_metric(engine: Engine) -> str:
    """`<engine>_requests_in_flight` (vLLM's: vllm_requests_in_flight, the name its fleets have always read)."""
    return f"{engine.name.replace('-', '_')}_requests_in_flight"


def external_rule(engine: Engine) -> dict[str, Any]:
    """The prometheus-adapter `externalRules` entry behind external_metric(engine): discovered from the engine's
    waiting gauge on pods the PodMonitor labels, the namespace as the HPA's namespace, and queried as waiting plus
    running over the HPA's selector (what KEDA's query sums: kubernetes.py load_query)."""
    waiting, running = engine.waiting_metric, engine.running_metric
    return {
        "seriesQuery": f'{waiting}{{namespace!="",{METRIC_LABEL}!=""}}',
        "resources": {"overrides": {"namespace": {"resource": "namespace"}}},
        "name": {"matches": f"^{waiting}$", "as": external_metric(engine)},
        "metricsQuery": f"sum({waiting}{{<<.LabelMatchers>>}}) + sum({running}{{<<.LabelMatchers>>}})",
    }


__all__ = ["METRIC_LABEL", "external_metric", "external_rule"]
