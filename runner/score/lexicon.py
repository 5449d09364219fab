"""The words the offline rules know the meaning of: opposites, quantities and near-synonyms.

WordNet is not installed with evalrun (nltk ships without its corpora, and nothing may be downloaded at
run time), so the offline rules read this small table instead, written for evalrun. It lists general
English, not the words of any test set:

- OPPOSITES: lines `kind: words | words`. Any word on the left is the opposite of any word on the right
  (the forms a stem does not reach are listed: high/higher/highest). A line `kind: a / b / c` is a set of
  which any two members exclude each other (another colour, another time of day). `kind` is what the
  verdict calls the difference. Words joined by `_` are phrases (`pick_up`, `out_of`); the rules read
  them as one word in any inflection of their first word ("picked up").
- QUANTITIES: words that state how many; two of them with different values state different facts
  ("one bag" / "both bags", "once" / "twice"). Vague ones differ only from "all" ("all items" / "some
  items") and, when they mean more than one (several, many), from "one": "three boys" are "some boys".
- SYNONYMS: lines of words read as one word when clauses are aligned ("the plane" is "the airplane",
  "the lady" is "the woman"), so that a negation or an opposite is found in a reworded sentence. They never
  make two texts match: the similarity stages still decide that.

A word whose light stem is another word's is left out ("plane" reads as "plan", "huge" as "hug").
Only what an answer can state plainly belongs here: a pair whose opposition depends on context (give /
take, charge / refund) is left to the similarity stages and to a judge.
"""
from __future__ import annotations

OPPOSITES = """
antonym: hot warm | cold cool chilly
antonym: speak speaking spoke talk talking talked sing singing sang | silent
antonym: eat eating ate | fast fasting
antonym: look looking looked watch watching notice noticing stare staring | ignore ignoring ignored
antonym: dressed clothed | naked nude undressed
antonym: wet damp | dry
antonym: full | empty
antonym: fill filled filling | empty emptied emptying
antonym: open opened opening opens | close closed closing closes shut
antonym: early | late
antonym: earlier sooner | later
antonym: high higher highest | low lower lowest
antonym: big bigger biggest large larger largest | small smaller smallest little tiny
antonym: long longer longest | short shorter shortest
antonym: tall taller tallest | short shorter shortest
antonym: old older oldest | new newer newest
antonym: old older oldest | young younger youngest
antonym: fast faster fastest | slow slower slowest
antonym: heavy heavier heaviest | light lighter lightest
antonym: dark darker | light lighter bright brighter
antonym: hard harder difficult | easy easier
antonym: hard harder | soft softer
antonym: strong stronger strongest | weak weaker weakest
antonym: cheap cheaper cheapest inexpensive | expensive costly
antonym: good better best | bad worse worst
antonym: right correct | wrong
antonym: true | false
antonym: positive | negative
antonym: clean | dirty
antonym: safe | dangerous
antonym: happy glad | sad unhappy
antonym: loud noisy | quiet silent
antonym: busy crowded | quiet
antonym: calm | rough stormy
antonym: thick | thin
antonym: wide | narrow
antonym: deep | shallow
antonym: fixed | variable
antonym: permanent | temporary
antonym: primary | secondary
antonym: confirm confirmed | cancel cancelled canceled
antonym: active activated | suspended deactivated
antonym: working functioning | broken down
antonym: public | private
antonym: internal | external
antonym: domestic national | international foreign
antonym: mandatory compulsory required obligatory | optional voluntary
antonym: present | absent
antonym: alive | dead
antonym: awake | asleep
antonym: online | offline
antonym: manual | automatic
antonym: maximum max | minimum min
antonym: more | less fewer
antonym: many much most | few little least
antonym: same | different
antonym: similar | different
antonym: friend | enemy
antonym: increase increased increasing rise rose risen raise | decrease decreased decreasing reduce reduced lower
antonym: rise rising rose risen | fall falling fell fallen sink
antonym: upgrade | downgrade
antonym: ascending | descending
antonym: climb ascend | descend get_down
antonym: start started starting begin began begun | end ended ending finish finished stop stopped
antonym: arrive arrival arrived | depart departure departed
antonym: enter entered | exit leave
antonym: accept approve grant allow permit | reject refuse deny decline forbid ban prohibit block
antonym: include included including | exclude excluded excluding
antonym: add added adding insert inserted attach apply applied put_on | remove removed removing delete deleted detach
antonym: add added adding insert inserted attach apply applied put_on | take_off take_out subtract
antonym: win won winning winner | lose lost losing loser
antonym: profit gain | loss
antonym: buy bought buying purchase buyer purchaser | sell sold selling seller vendor
antonym: lend lent lending lender | borrow borrowed borrowing borrower
antonym: send sent sending sender | receive received receiving recipient receiver
antonym: push pushed pushing | pull pulled pulling
antonym: pick_up lift lifted hold_up raise | put_down set_down drop_off drop dropped pull_down
antonym: import imported | export exported
antonym: inbound incoming | outbound outgoing
antonym: input | output
antonym: upload uploaded | download downloaded
antonym: log_in sign_in login | log_out sign_out logout
antonym: lock locked locking | unlock unlocked unlocking
antonym: hit hitting | miss missed missing
antonym: sit sitting sat seated | stand standing stood
antonym: sleep sleeping slept asleep | wake awake
antonym: save saved saving | spend spent spending
antonym: deposit deposited | withdraw withdrew withdrawn withdrawal
antonym: credit | debit
antonym: pass passed | fail failed
antonym: remember | forget
antonym: love like | hate dislike
antonym: up upward upwards upstairs uphill | down downward downwards downstairs downhill
antonym: above | below beneath
antonym: over | under
antonym: before | after
antonym: first | last final
antonym: next | last previous
antonym: inside indoors interior | outside outdoors exterior
antonym: in into | out out_of
antonym: on onto | off
antonym: towards toward at | away_from
antonym: near nearby close_to | far far_from distant
antonym: front in_front_of ahead ahead_of | back behind rear
antonym: top upper | bottom
antonym: left | right
antonym: north northern / south southern / east eastern / west western
another person: man men male gentleman gentlemen | woman women female lady ladies
another person: boy boys | girl girls
another person: husband | wife
another person: father dad | mother mom mum
another person: son | daughter
another person: brother | sister
another person: uncle | aunt
another person: nephew | niece
another person: grandfather grandpa | grandmother grandma
another person: king | queen
another person: he him his | she her hers
another role: landlord | tenant
another role: employer | employee
another role: host | guest
another role: teacher | student
another role: doctor | patient
another role: parent | child
another role: driver | passenger
another role: payer | payee
another position: first / second / third / fourth / fifth
another time of day: morning / afternoon / evening / night
another season: summer / autumn / winter
another colour: red / blue / green / yellow / black / white / orange / purple / pink / brown / grey gray
"""

# value: the words that state it. "all" is any whole (all, every, the whole); vague words have no value.
QUANTITIES = {
    "1": "one single once",
    "2": "two both twice double pair couple",
    "3": "three triple thrice",
    "half": "half",
    "all": "all every each whole entire",
}
VAGUE_QUANTITIES = "some"  # one or more
PLURAL_QUANTITIES = "several few many most lots plenty"  # more than one

SYNONYMS = """
airplane aeroplane aircraft
child children kid kids
woman lady
man guy
shop store
package parcel
taxi cab
car automobile
bicycle bike
motorcycle motorbike
telephone phone
photograph photo
sofa couch
big large
small little tiny
fast quick rapid
begin start
buy purchase
help assist
repair fix mend
talk speak
shout yell
jump leap
rock stone
guard defend protect
doctor physician
customer client
ocean sea
someone somebody
everyone everybody
error mistake
sick ill
"""
