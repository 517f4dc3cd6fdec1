"""A minute-by-minute model of one region's Auto Scaling groups driven by the alarms and step policies the
stack generates: it reads their settings from the resource graph (group sizes, each alarm's metric math,
threshold, periods and actions, each policy's steps) and evaluates them as AWS documents them.

- CloudWatch: an alarm is in ALARM when `datapointsToAlarm` of its last `evaluationPeriods` one-minute
  datapoints breach; missing data is notBreaching (the alarms set treatMissingData so); Auto Scaling actions
  are invoked every minute while the alarm stays in ALARM (CloudWatch user guide, "Alarm actions").
- Metric math: IF, FILL, comparisons, AND/OR, + - * /; a division by zero or a missing metric yields no
  datapoint (CloudWatch user guide, "Metric math syntax and functions").
- Step scaling: the step whose [lower, upper) interval holds metric - threshold applies; ChangeInCapacity,
  then the group's desired capacity is held within [MinSize, MaxSize] (EC2 Auto Scaling user guide, "Step and
  simple scaling policies"). Every invocation applies its step (no warm-up discount): the most AWS could add.
- Groups: on-demand launches always succeed; a spot group (a mixed instances policy with 0% on-demand above
  the base) launches only while spot is available, and its instances are interrupted when spot goes. A launch
  is Pending for the planned cold start, then InService; a removed instance drains for the planned drain
  (still running) before it is gone.

The load: requests in flight = demand (requests/s) x target in flight per replica / measured requests/s per
replica (Little's law at the planned latency), published by every in-service replica under the fleet.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuinfra.graph import Graph

TOKEN = re.compile(r"\s*(>=|<=|==|!=|[-+*/(),<>]|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?)")


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"cannot read {text[pos:]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


Value = float | None


class Expression:
    """A metric math expression, parsed once, evaluated against named values (None: no datapoint)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.tree = self._or()
        if self.i != len(self.toks):
            raise ValueError(f"trailing {self.toks[self.i :]} in {text!r}")

    def _peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _take(self, expected: str | None = None) -> str:
        tok = self.toks[self.i]
        if expected is not None and tok != expected:
            raise ValueError(f"expected {expected!r}, got {tok!r} in {self.text!r}")
        self.i += 1
        return tok

    def _binary(self, ops: tuple[str, ...], sub: Callable[[], Any]) -> Any:
        node = sub()
        while self._peek() in ops:
            op = self._take()
            node = (op, node, sub())
        return node

    def _or(self) -> Any:
        return self._binary(("OR",), self._and)

    def _and(self) -> Any:
        return self._binary(("AND",), self._cmp)

    def _cmp(self) -> Any:
        return self._binary((">=", "<=", "==", "!=", ">", "<"), self._add)

    def _add(self) -> Any:
        return self._binary(("+", "-"), self._mul)

    def _mul(self) -> Any:
        return self._binary(("*", "/"), self._unary)

    def _unary(self) -> Any:
        if self._peek() == "-":
            self._take()
            return ("neg", self._unary())
        return self._primary()

    def _primary(self) -> Any:
        tok = self._take()
        if tok == "(":
            node = self._or()
            self._take(")")
            return node
        if re.fullmatch(r"\d+(?:\.\d+)?", tok):
            return ("num", float(tok))
        if self._peek() == "(":
            self._take("(")
            args = [self._or()]
            while self._peek() == ",":
                self._take(",")
                args.append(self._or())
            self._take(")")
            return ("call", tok, args)
        return ("ref", tok)

    def evaluate(self, values: dict[str, Value]) -> Value:
        return _eval(self.tree, values)


def _eval(node: Any, v: dict[str, Value]) -> Value:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "ref":
        if node[1] not in v:
            raise KeyError(f"no query {node[1]!r}")
        return v[node[1]]
    if kind == "neg":
        x = _eval(node[1], v)
        return None if x is None else -x
    if kind == "call":
        name, args = node[1], node[2]
        if name == "FILL":
            x = _eval(args[0], v)
            return _eval(args[1], v) if x is None else x
        if name == "IF":
            cond = _eval(args[0], v)
            if cond is None:
                return None
            return _eval(args[1] if cond != 0 else args[2], v)
        raise ValueError(f"function {name} is not modelled")
    op, left, right = node
    a, b = _eval(left, v), _eval(right, v)
    if a is None or b is None:
        return None
    if op == "/":
        return None if b == 0 else a / b
    return float(
        {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            ">=": lambda: a >= b,
            "<=": lambda: a <= b,
            "==": lambda: a == b,
            "!=": lambda: a != b,
            ">": lambda: a > b,
            "<": lambda: a < b,
            "AND": lambda: bool(a) and bool(b),
            "OR": lambda: bool(a) or bool(b),
        }[op]()
    )


@dataclass
class Instance:
    state: str  # pending, inservice, draining
    until: int  # the minute its state ends (pending: in service; draining: gone)


@dataclass
class Group:
    name: str
    min_size: int
    max_size: int
    spot: bool
    desired: int = 0
    instances: list[Instance] = field(default_factory=list)

    def count(self, state: str) -> int:
        return sum(1 for i in self.instances if i.state == state)


@dataclass
class Step:
    lower: float | None
    upper: float | None
    change: int


@dataclass
class Alarm:
    name: str
    queries: list[dict[str, Any]]
    signal: Expression
    expressions: dict[str, Expression]
    threshold: float
    above: bool
    periods: int
    to_alarm: int
    actions: list[tuple[str, list[Step]]]  # (group name, steps)
    history: deque[bool] = field(default_factory=deque)

    def breaching(self, value: Value) -> bool:
        if value is None:
            return False  # treatMissingData notBreaching
        return value > self.threshold if self.above else value < self.threshold


def _steps(policy: Any) -> list[Step]:
    def bound(x: Any) -> float | None:
        return None if x in (None, "") else float(x)

    return [
        Step(bound(s.get("metricIntervalLowerBound")), bound(s.get("metricIntervalUpperBound")), s["scalingAdjustment"])
        for s in policy.inputs["stepAdjustments"]
    ]


class RegionSim:
    """One region of a fleet: its groups, alarms and policies as the graph holds them."""

    def __init__(
        self,
        graph: Graph,
        fleet: str,
        region: str,
        cold_start_minutes: int,
        drain_minutes: int,
        rps_per_replica: float,
        target_per_replica: float,
    ) -> None:
        prefix = f"{fleet}-{region}-"
        self.groups: dict[str, Group] = {}
        for g in graph.of_type("aws:autoscaling/group:Group"):
            name = g.inputs["name"]
            if not name.startswith(prefix):
                continue
            dist = (g.inputs.get("mixedInstancesPolicy") or {}).get("instancesDistribution") or {}
            spot = bool(dist) and dist.get("onDemandPercentageAboveBaseCapacity") == 0
            self.groups[name] = Group(name, g.inputs["minSize"], g.inputs["maxSize"], spot, g.inputs["minSize"])
        policies = {
            p.name: p for p in graph.of_type("aws:autoscaling/policy:Policy") if p.name.startswith(f"{prefix}replicas")
        }
        self.alarms: list[Alarm] = []
        for a in graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm"):
            if not a.name.startswith(f"{prefix}replicas-"):
                continue
            queries = a.inputs["metricQueries"]
            signal = next(q for q in queries if q.get("returnData"))
            actions = []
            for arn in a.inputs["alarmActions"]:
                policy = next(p for n, p in policies.items() if f"policy/{n}-" in arn)
                actions.append((policy.inputs["autoscalingGroupName"], _steps(policy)))
            self.alarms.append(
                Alarm(
                    a.name,
                    [q for q in queries if q.get("metric")],
                    Expression(signal["expression"]),
                    {q["id"]: Expression(q["expression"]) for q in queries if q.get("expression") and q is not signal},
                    float(a.inputs["threshold"]),
                    a.inputs["comparisonOperator"] == "GreaterThanThreshold",
                    a.inputs["evaluationPeriods"],
                    a.inputs["datapointsToAlarm"],
                    actions,
                )
            )
        self.cold = cold_start_minutes
        self.drain = drain_minutes
        self.per_replica = rps_per_replica
        self.target = target_per_replica
        self.minute = 0
        self.log: list[dict[str, Any]] = []

    # ---- what is running --------------------------------------------------------------------------------

    def running(self) -> int:
        """Instances that exist and run: pending, in service or draining, in every group."""
        return sum(len(g.instances) for g in self.groups.values())

    def in_service(self) -> int:
        return sum(g.count("inservice") for g in self.groups.values())

    # ---- one minute ------------------------------------------------------------------------------------

    def _metric(self, metric: dict[str, Any], demand_rps: float) -> Value:
        if metric["namespace"] != "AWS/AutoScaling":
            serving = self.in_service()
            return demand_rps * self.target / self.per_replica if serving else None
        group = self.groups[metric["dimensions"]["AutoScalingGroupName"]]
        return float(
            {
                "GroupInServiceInstances": lambda: group.count("inservice"),
                "GroupPendingInstances": lambda: group.count("pending"),
                "GroupDesiredCapacity": lambda: group.desired,
                "GroupMaxSize": lambda: group.max_size,
            }[metric["metricName"]]()
        )

    def _evaluate(self, alarm: Alarm, demand_rps: float) -> Value:
        values: dict[str, Value] = {q["id"]: self._metric(q["metric"], demand_rps) for q in alarm.queries}
        pending = dict(alarm.expressions)
        while pending:  # intermediate expressions, in dependency order
            for qid, expr in list(pending.items()):
                try:
                    values[qid] = expr.evaluate(values)
                    del pending[qid]
                except KeyError:
                    continue
        return alarm.signal.evaluate(values)

    def _act(self, alarm: Alarm, value: float) -> None:
        delta = value - alarm.threshold
        for group_name, steps in alarm.actions:
            group = self.groups[group_name]
            for step in steps:
                low = -math.inf if step.lower is None else step.lower
                high = math.inf if step.upper is None else step.upper
                if low <= delta < high or (delta == high == 0):
                    group.desired = max(group.min_size, min(group.max_size, group.desired + step.change))
                    break

    def _fulfil(self, spot_available: bool) -> None:
        now = self.minute
        for g in self.groups.values():
            for i in g.instances:
                if i.state == "pending" and now >= i.until:
                    i.state, i.until = "inservice", 0
            g.instances = [i for i in g.instances if not (i.state == "draining" and now >= i.until)]
            if g.spot and not spot_available:
                for i in g.instances:
                    if i.state != "draining":  # the two-minute interruption notice, then gone
                        i.state, i.until = "draining", now + 2
            live = [i for i in g.instances if i.state != "draining"]
            if len(live) < g.desired and (spot_available or not g.spot):
                g.instances += [Instance("pending", now + self.cold) for _ in range(g.desired - len(live))]
            elif len(live) > g.desired:
                extra = len(live) - g.desired
                for i in sorted(live, key=lambda i: i.state != "pending")[:extra]:
                    if i.state == "pending":
                        g.instances.remove(i)
                    else:
                        i.state, i.until = "draining", now + self.drain

    def tick(self, demand_rps: float, spot_available: bool = True) -> None:
        self._fulfil(spot_available)
        for alarm in self.alarms:
            value = self._evaluate(alarm, demand_rps)
            alarm.history.append(alarm.breaching(value))
            while len(alarm.history) > alarm.periods:
                alarm.history.popleft()
            if sum(alarm.history) >= alarm.to_alarm and value is not None:
                self._act(alarm, value)
        self.log.append(
            {
                "minute": self.minute,
                "demand": demand_rps,
                "spot": spot_available,
                "running": self.running(),
                "in_service": self.in_service(),
                **{g.name.rsplit("-", 1)[-1]: (g.desired, len(g.instances)) for g in self.groups.values()},
            }
        )
        self.minute += 1

    def run(self, minutes: int, demand: Callable[[int], float], spot: Callable[[int], bool] = lambda m: True) -> None:
        for _ in range(minutes):
            self.tick(demand(self.minute), spot(self.minute))


__all__ = ["Expression", "RegionSim"]
