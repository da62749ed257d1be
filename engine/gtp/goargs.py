"""The Go in GTP's arguments, over the Go-free protocol (protocol.py): colours and vertices as
argument types, the two as reply text, and the GTP specification's failure texts of the Go
commands. commands.py and formats.py both use them.
"""
from engine.rules.board import BLACK, PASS, WHITE
from engine.rules.coords import parse_vertex
from engine.gtp.protocol import ArgType, syntax_error

# Canonical failure texts of the GTP specification's Go commands.
ILLEGAL_MOVE = "illegal move"
UNACCEPTABLE_SIZE = "unacceptable size"
CANNOT_UNDO = "cannot undo"
BOARD_NOT_EMPTY = "board not empty"
INVALID_NUMBER_OF_STONES = "invalid number of stones"
BAD_VERTEX_LIST = "bad vertex list"
CANNOT_LOAD = "cannot load file"


class ColourArg(ArgType):
    name = "colour"
    WORDS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}

    def parse(self, token, engine):
        try:
            return self.WORDS[token.lower()]
        except KeyError:
            raise syntax_error(f"invalid colour {token!r}") from None


class VertexArg(ArgType):
    """A board vertex or `pass`, any case; a loc or PASS. Reads the board size from the engine
    (`engine.size`)."""
    name = "vertex"

    def __init__(self, allow_pass=True):
        self.allow_pass = allow_pass

    def parse(self, token, engine):
        try:
            loc = parse_vertex(token, engine.size)
        except ValueError:
            raise syntax_error(f"invalid vertex {token!r}") from None
        if loc == PASS and not self.allow_pass:
            raise syntax_error("pass is not a board vertex here")
        return loc


COLOUR = ColourArg()
VERTEX = VertexArg()
POINT = VertexArg(allow_pass=False)


def colour_word(colour):
    return "black" if colour == BLACK else "white"


def colour_letter(colour):
    return "b" if colour == BLACK else "w"
