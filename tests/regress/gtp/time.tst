# time_settings, time_left, kgs-time_settings, cputime; genmove still answers under each clock.

boardsize 9
clear_board
1 time_settings 60 10 5
#? []
2 time_left b 30 0
#? []
3 time_left w 8 3
#? []
4 genmove b
#? [[A-HJ][1-9]|pass]
5 time_settings 300 0 0
#? []
6 time_left w 0.5 0
#? []
7 genmove w
#? [[A-HJ][1-9]|pass]
8 kgs-time_settings none
#? []
9 kgs-time_settings absolute 300
#? []
10 kgs-time_settings byoyomi 300 30 5
#? []
11 time_left b 20 3
#? []
12 genmove b
#? [[A-HJ][1-9]|pass]
13 kgs-time_settings canadian 300 60 10
#? []
14 kgs-time_settings CANADIAN 0 60 10
#? []
15 time_left w 40 2
#? []
16 genmove w
#? [[A-HJ][1-9]|pass]
17 cputime
#? [\d+\.\d{3}]

time_settings -1 0 0
#! [syntax error.*]
time_settings 60 10
#! [syntax error.*]
time_left x 1 0
#! [syntax error.*]
time_left b 10 -1
#! [syntax error.*]
kgs-time_settings byoyomi 300
#! [syntax error.*]
kgs-time_settings byoyomi 300 30 2.5
#! [syntax error.*]
kgs-time_settings sudden 300
#! [syntax error.*]
