"""The value nets' architectures, one descriptor each (`NetArchitecture`): the network class, the
input sets it takes, what a weight file records of a net (`record()`) and how that record builds
the net again, every size checked (`build()`). `ARCHITECTURES` lists them by the name weight files
carry; `architecture_of()` finds a network's.

Who asks: engine/nets/weights.py (save and load), engine/nets/evaluator.py (the evaluator of each
architecture, registered there with @evaluates), engine/training/recipes.py (how each is trained).
Adding an architecture: its network module, one entry here, its evaluator class, and a training
recipe if it is to be trained. The move-prediction net (engine/nets/policy.py) is not a value net:
its files have a format of their own (float32, its own loader), and weight files refuse them.
"""
from dataclasses import dataclass
from typing import Callable

from engine.nets import network as isn
from engine.nets import softseg
from engine.nets import unitnet


class ArchitectureError(ValueError):
    """A record that does not describe a net of this kosumi; the message says what is wrong
    (weights.py adds the file's name)."""


@dataclass(frozen=True)
class NetArchitecture:
    name: str                                   # metadata["architecture"]["name"]
    network_type: type
    feature_sets: object                        # the input sets it takes (a container of names)
    feature_set_version: Callable[[str], int]
    feature_kind: str                           # what its messages call an input set
    record: Callable                            # network -> metadata["architecture"]
    build: Callable                             # (record, feature set name) -> network, checked

    def check_feature_set(self, feature):
        """The name of a known input set of this architecture at this kosumi's version, from a
        weight file's metadata["feature_set"]."""
        name = feature.get("name")
        if name not in self.feature_sets:
            raise ArchitectureError(f"unknown {self.feature_kind} {name!r} "
                                    f"(known: {sorted(self.feature_sets)})")
        if feature.get("version") != self.feature_set_version(name):
            raise ArchitectureError(f"{self.feature_kind} {name} version {feature.get('version')!r} "
                                    f"does not match this kosumi's version "
                                    f"{self.feature_set_version(name)}")
        return name

    def feature_record(self, network):
        """metadata["feature_set"] of a network of this architecture."""
        return {"name": network.feature_set, "version": self.feature_set_version(network.feature_set)}


def check_integers(record, limits):
    """Each record[key] an integer in limits[key] = (low, high)."""
    for key, (low, high) in limits.items():
        value = record.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ArchitectureError(f"architecture {key} should be an integer {low}..{high}, "
                                    f"got {value!r}")


def check_sizes(record, network):
    """The sizes a record gives are those of the network its architecture builds."""
    for key, expected in (("num_inputs", network.num_inputs), ("num_outputs", network.num_outputs),
                          ("num_params", network.num_params)):
        if record.get(key) != expected:
            raise ArchitectureError(f"architecture says {key} {record.get(key)!r}; that "
                                    f"architecture has {expected}")


# ---------------------------------------------------------------------------------------------
# Blair's Internal Symmetry Network (engine/nets/network.pyx)

def isn_network(counts, feature_set, explicit_biases=None, rich_signal=False):
    """An ISN of hidden counts {"T", "S", "D", "C", "F": count}."""
    return isn.Network(feature_set, trivial=counts["T"], symmetric=counts["S"], diagonal=counts["D"],
                       chiral=counts["C"], faithful=counts["F"], explicit_biases=explicit_biases,
                       rich_signal=rich_signal)


def _isn_record(network):
    record = {"hidden": network.hidden_counts, "num_inputs": network.num_inputs,
              "num_outputs": network.num_outputs,
              "explicit_biases": bool(network.explicit_biases), "num_params": network.num_params}
    if network.rich_signal:     # written only when set: plain nets keep their metadata as before
        record["rich_signal"] = True
    return record


def _isn_build(record, feature_set):
    known = isn.FEATURE_SETS[feature_set]
    hidden = record.get("hidden")
    if not isinstance(hidden, dict) or sorted(hidden) != sorted(isn.HIDDEN_TYPES) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 64 for v in hidden.values()):
        raise ArchitectureError(f"architecture hidden counts {hidden!r} should map T, S, D, C, F "
                                f"to integers 0..64")
    if record.get("num_inputs") != known.num_inputs:
        raise ArchitectureError(f"architecture has {record.get('num_inputs')!r} inputs; "
                                f"feature set {known.name} has {known.num_inputs}")
    rich_signal = record.get("rich_signal", False)
    if not isinstance(rich_signal, bool):
        raise ArchitectureError(f"architecture rich_signal should be true or false, "
                                f"got {rich_signal!r}")
    outputs = isn.N_OUTPUTS + (isn.N_RICH_OUTPUTS if rich_signal else 0)
    if record.get("num_outputs") != outputs:
        raise ArchitectureError(f"architecture has {record.get('num_outputs')!r} outputs, "
                                f"not {outputs}")
    biases = record.get("explicit_biases")
    if not isinstance(biases, bool):
        raise ArchitectureError(f"architecture explicit_biases should be true or false, "
                                f"got {biases!r}")
    network = isn_network(hidden, known.name, biases, rich_signal)
    if record.get("num_params") != network.num_params:
        raise ArchitectureError(f"architecture says {record.get('num_params')!r} parameters; "
                                f"that architecture has {network.num_params}")
    return network


ISN = NetArchitecture(
    name="isn", network_type=isn.Network, feature_sets=isn.FEATURE_SETS,
    feature_set_version=lambda name: isn.FEATURE_SETS[name].version,
    feature_kind="input feature set", record=_isn_record, build=_isn_build)


# ---------------------------------------------------------------------------------------------
# NeuroGo 3's soft-segmentation network (engine/nets/softseg.pyx)

def _sized_record(network):
    return {**network.sizes, "num_inputs": network.num_inputs,
            "num_outputs": network.num_outputs, "num_params": network.num_params}


def _softseg_build(record, feature_set):
    check_integers(record, {"hidden1": (1, 64), "hidden2": (0, 64), "intervals": (1, 64)})
    cutoff = record.get("cutoff")
    if not isinstance(cutoff, (int, float)) or isinstance(cutoff, bool) or not 0 < cutoff < 1:
        raise ArchitectureError(f"architecture cutoff should be a number in (0, 1), "
                                f"got {cutoff!r}")
    network = softseg.SoftSegNetwork(feature_set, record["hidden1"], record["hidden2"],
                                     record["intervals"], float(cutoff))
    check_sizes(record, network)
    return network


SOFTSEG = NetArchitecture(
    name="softseg", network_type=softseg.SoftSegNetwork, feature_sets=softseg.FEATURE_SETS,
    feature_set_version=softseg.feature_set_version, feature_kind="soft-segmentation input set",
    record=_sized_record, build=_softseg_build)


# ---------------------------------------------------------------------------------------------
# NeuroGo 1996's network over units (engine/nets/unitnet.pyx)

def _unitgraph_build(record, feature_set):
    check_integers(record, {"hidden": (1, unitnet.MAX_HIDDEN_UNITS),
                            "max_distance": (1, unitnet.MAX_DISTANCE)})
    network = unitnet.UnitGraphNetwork(feature_set, record["hidden"], record["max_distance"])
    check_sizes(record, network)
    return network


UNITGRAPH = NetArchitecture(
    name="unitgraph", network_type=unitnet.UnitGraphNetwork, feature_sets=unitnet.FEATURE_SETS,
    feature_set_version=unitnet.feature_set_version, feature_kind="unit feature set",
    record=_sized_record, build=_unitgraph_build)


ARCHITECTURES = {architecture.name: architecture for architecture in (ISN, SOFTSEG, UNITGRAPH)}


def architecture_of(network):
    """The descriptor of a network's architecture."""
    for architecture in ARCHITECTURES.values():
        if isinstance(network, architecture.network_type):
            return architecture
    raise TypeError(f"{type(network).__name__} is not a network of a known architecture")
