"""The engine's parameters at run time: the fields of the settings objects its players hold
(engine/play/settings.py), by name, for the GTP commands `kosumi-list-params`,
`kosumi-get-param`, `kosumi-set-param` (after KataGo's kata-list-params/kata-get-param/
kata-set-param) and `kosumi-param`, GoGui's `param` analyze command (after Fuego's
uct_param_search): with no arguments `[type] name value` lines, with `name value` a change.

A change is made in place, in the objects the players hold, so it counts from the next move or
search on. `resign_threshold` is the playing player's: the search's win rate with --search mcts,
else the 1-ply score fraction (the other is never read in that mode). Fields marked `startup`
(the seed, the symmetries of the nets) are listed and read but cannot be changed.
"""
from engine.play.settings import format_value, parse_value, settings_fields
from engine.gtp.options import flag_of
from engine.gtp.protocol import GtpError

SETTABLE_ONLY_AT_START = "{name} is fixed when the engine starts (command line {flag})"


class ParameterTable:
    """name -> (settings object, field), in the order of the settings classes' fields."""

    def __init__(self, player_settings=None, search_settings=None, searching=False):
        self.entries = {}
        for settings in (player_settings, search_settings):
            if settings is None:
                continue
            for settings_field in settings_fields(type(settings)):
                name = settings_field.name
                if not settings_field.metadata["cli"]:
                    continue
                if name in self.entries and (settings is search_settings) != searching:
                    continue
                self.entries[name] = (settings, settings_field)

    def names(self):
        return list(self.entries)

    def _entry(self, name):
        entry = self.entries.get(name)
        if entry is None:
            raise GtpError(f"unknown parameter {name!r}; kosumi-list-params lists them")
        return entry

    def get(self, name):
        settings, settings_field = self._entry(name)
        return format_value(settings_field, getattr(settings, name))

    def set(self, name, text):
        """Parse text as name's value and set it; GtpError naming the parameter and what it takes
        (nothing changes then)."""
        settings, settings_field = self._entry(name)
        if settings_field.metadata["startup"]:
            raise GtpError(SETTABLE_ONLY_AT_START.format(name=name,
                                                         flag=flag_of(settings_field)))
        try:
            value = parse_value(settings_field, text)
        except ValueError as error:
            raise GtpError(str(error)) from None
        setattr(settings, name, value)

    def listing(self):
        """`name value` lines, every parameter."""
        return "\n".join(f"{name} {self.get(name)}" for name in self.entries)

    def gogui_listing(self):
        """GoGui's param lines of the parameters that can be changed: `[bool] name 0|1`,
        `[list/a/b/c] name value`, `[string] name value`."""
        lines = []
        for name, (settings, settings_field) in self.entries.items():
            meta = settings_field.metadata
            if meta["startup"]:
                continue
            value = getattr(settings, name)
            if meta["kind"] is bool:
                lines.append(f"[bool] {name} {int(value)}")
            elif meta["choices"]:
                lines.append(f"[list/{'/'.join(meta['choices'])}] {name} {value}")
            else:
                lines.append(f"[string] {name} {format_value(settings_field, value)}")
        return "\n".join(lines)
