# Protocol commands, ids, comments and the canonical error texts (GTP spec sections 2.2, 3, 6).

1 protocol_version
#? [2]
2 name
#? [kosumi]
3 version
#? [\d+\.\d+\.\d+\S*]
4 known_command genmove
#? [true]
5 known_command kata-analyze
#? [true]
6 known_command frobnicate
#? [false]

# The CGOS clients refuse an engine whose list lacks any of these six.
7 list_commands
#? [(?=.*^boardsize$)(?=.*^clear_board$)(?=.*^komi$)(?=.*^play$)(?=.*^genmove$)(?=.*^quit$).*]
8 list_commands
#? [(?=.*^time_settings$)(?=.*^time_left$).*]

# Unknown commands and bad arguments.
frobnicate
#! [unknown command]
known_command
#! [syntax error.*]
protocol_version extra
#! [syntax error.*]

# A command is matched case-insensitively when no exact match exists.
9 PROTOCOL_VERSION
#? [2]

# Comments, tabs and blank lines (the tab below separates the id from the command).
# a comment line gets no reply
10	protocol_version	# a comment after a command
#? [2]

   11    name     
#? [kosumi]

# quit answers, then the engine stops reading.
12 quit
#? []
13 protocol_version
#? [this line is never reached]
