"""argparse helpers shared by kosumi's command lines (kosumi, kosumi-train, kosumi-match)."""
import argparse
import math


def number(kind=float, *, minimum=None, maximum=None, above=None, finite=True, what="value"):
    """An argparse type: text -> kind (int or float) within the bounds (minimum/maximum inclusive,
    above exclusive; finite=False lets a float be inf), else ArgumentTypeError saying the rule."""
    if minimum is not None and maximum is not None:
        rule = f"{minimum}..{maximum}"
    elif above is not None:
        rule = f"> {above}" + (f" and <= {maximum}" if maximum is not None else "")
    elif minimum is not None:
        rule = f">= {minimum}"
    elif maximum is not None:
        rule = f"<= {maximum}"
    else:
        rule = "a finite number" if finite else "a number"

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be {'an integer' if kind is int else 'a number'}, not {text!r}") from None
        out_of_range = (
            (kind is float and (math.isnan(value) or (finite and math.isinf(value))))
            or (minimum is not None and value < minimum)
            or (above is not None and value <= above)
            or (maximum is not None and value > maximum))
        if out_of_range:
            raise argparse.ArgumentTypeError(f"{what} must be {rule}, not {text!r}")
        return value

    return parse


def options_given(actions, args):
    """The options among argparse `actions` whose values in `args` are not their defaults (the
    first spelling of each): what a command that takes its settings from a file (a resumed match,
    a run started from a net) must refuse to be told again."""
    return [action.option_strings[0] for action in actions
            if getattr(args, action.dest) != action.default]
