# final_score and final_status_list: Benson, the network's ownership, seki; Chinese counting.

boardsize 9
clear_board
komi 7
1 final_score
#? [W\+7\.0]
2 final_status_list alive
#? []

# Black's pass-alive wall with the dead white stone B5 inside (see genmove.tst).
boardsize 5
clear_board
komi 0.5
play b A4
play b B4
play b C4
play b D4
play b E4
play b D5
play w B5
3 final_status_list dead
#? [B5]
4 final_status_list alive
#? [D5 A4 B4 C4 D4 E4]
5 final_status_list seki
#? []
6 final_score
#? [B\+24\.5]
final_status_list everything
#! [syntax error.*]
final_status_list
#! [syntax error.*]
final_score now
#! [syntax error.*]

# A seki on the lower edge: the black chain on line 2 and the white chain B1-D1 share the
# liberties A1 and E1, and whoever fills one puts itself in atari.
clear_board
play w A3
play w B3
play w C3
play w D3
play w E3
play b A2
play b B2
play b C2
play b D2
play b E2
play w B1
play w C1
play w D1
7 final_status_list seki
#? [A2 B2 C2 D2 E2\nB1 C1 D1]
8 final_status_list dead
#? []
9 final_status_list alive
#? [A3 B3 C3 D3 E3]
# White 8 stones + 10 points above; Black 5 stones; A1 and E1 are nobody's.
10 final_score
#? [W\+13\.5]
