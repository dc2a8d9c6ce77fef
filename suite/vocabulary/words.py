"""Words for text that reads as a person's or a model's: the disguise's replacements and the native
generators' prompts, replies, code, paths and commands.

Two lists, written for this suite: ``COMMON`` holds the short words any English text or program
is full of (articles, pronouns, keywords, command names). They say nothing about where a text came
from, so a disguise keeps them and the generators use them as glue. ``CONTENT`` holds the
nouns, verbs and adjectives a task is about; a disguise swaps each word outside ``COMMON`` for
one of these (or, when those run out, for a pronounceable made-up word) of the same length.
"""

from __future__ import annotations

import random

COMMON = frozenset("""
a an the and or but if then else so as at by for from in into of on onto to up with without about after before
over under than that this these those there here what when where which who why how all any each every some no
not nor only also just very too more most less few many much such own same other another again once still yet
i me my we us our you your he him his she her it its they them their is are was were be been being am do does
did done doing have has had having will would can could should may might must shall let lets please thanks ok
yes now new old good bad next last first one two three four five six ten
def return fn let const var import from class if elif else for while try except finally raise with as pass
true false none null nil self this pub use mut async await struct enum impl match type interface func package
int str bool float list dict map set vec string void static public private
git cargo npm npx yarn pnpm pip python python3 node go make pytest ls cd cat grep rg sed awk echo rm mkdir cp mv
touch chmod sudo curl docker bash sh run test build install add commit push pull diff log status check fix
error warning failed passed ok src lib bin tests test main index app api docs readme md py rs ts js json toml
yaml yml txt sh lock
claude code codex gemini cli jsonl rollout session agent tool user assistant system model message messages info
thought thoughts reasoning call calls result results output input text content event events turn turns
""".split())

CONTENT = tuple("""
able acid aged arch area army atom aunt axis bake band bank barn base bath beam bean bear beef bell belt bend
bird blot blue boat body bold bolt bone book boot bowl brick bulb bush cable cage cake calm camp card cart case
cave cell chain chair chalk chart chest chip city clay clerk cliff clock cloth cloud coal coast coat code coin
cold comb cone cord core corn cost crab crane crow crust cube cup curve dark dawn deck deer desk dial dish dock
door dove drum dust eagle earth edge engine fable farm fern field flag flame flask fleet floor flour flute foam
fold forest fork fort frame frost fruit gate gear glass globe glove goat grain grape grass gravel grove guide
hall hammer harbor hatch hawk heart hedge hill hinge hive honey hook horn horse house husk inlet iron island
jacket jar jewel jungle kettle kite knife knot ladder lake lamp lane lantern latch lawn leaf ledger lemon lever
light lily linen lion lock loom lunar maple marble market mast meadow melon metal meter mill mint mirror moss
motor mount mouse needle nest net north nut oak oar ocean olive orbit orchard oven owl paddle page paint palm
panel paper parcel parrot path pearl pebble pen pepper piano pillar pine pipe plank plant plate plum pocket
pole pond porch post pouch prism pulley pump quartz quill rabbit rail rain ramp raven reed ridge ring river road
robin rock roof root rope rose rudder rust saddle sail salt sand scale scarf screw seed shade shelf shell ship
shore shovel signal silk silver sketch sled slope snow socket soil spade spark spindle spoke spool spring
square stable stair stamp star steam steel stem stone stool storm stove straw stream street string summit sun
swan table tank tape tide tiger timber tin token tower trail train tray tree trunk tulip tunnel turtle valley
valve vase velvet vessel village vine violet wagon wall walnut wand water wave wheat wheel willow window wing
winter wire wolf wood wool yard zebra zinc
align amend apply argue avoid blend borrow bounce breathe build carry catch change charge chase climb collect
compare count cover crawl dance deliver divide drift drop enter escape explain fetch fill float fold follow
gather glide grow guard handle hang hover hurry invite join jump keep knock launch lead lift listen load march
measure melt mend merge mix move nudge offer open order pack paint parse pause pick place plan point polish
pour press print pull punch reach read rebuild record reduce remind render repair reply rescue rest retry
return ride rinse roll rotate sample scan scatter search select send shape share shift shine sift sing skip
slide sort spend spin split spread squeeze stack start steer stitch store stretch study supply sweep swing
tally teach throw tidy trace trade travel trim turn twist unfold unpack update visit wander warm wash watch
weave weigh whisper wipe wonder wrap write
amber bitter brave brief bright broad busy calm cheap clean clear clever close cosy crisp curly damp dense
early eager empty even exact faint fancy fast fierce final firm flat fresh fuzzy gentle giant glad grand
gray great green happy hardy heavy hollow humble idle jolly keen kind large late lazy lean light little lively
loose loud lucky mellow mild modern narrow neat noble odd pale plain polite proper proud quick quiet rapid
rare ready rich rigid ripe rough round royal rural rusty safe sharp shiny short silent simple slim slow small
smart smooth soft solid sour spare stale steady steep sticky stiff strong sturdy sunny sweet swift tall tame
tender thick thin tidy tiny tough vast vivid warm weary wide wild windy wise young
""".split())

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"


def by_length(exclude: frozenset[str] = frozenset()) -> dict[int, list[str]]:
    """``CONTENT`` grouped by length, less the excluded words."""
    groups: dict[int, list[str]] = {}
    for word in CONTENT:
        if word not in exclude:
            groups.setdefault(len(word), []).append(word)
    return groups


def made_up(length: int, rng: random.Random) -> str:
    """A pronounceable word of the length: consonants and vowels in turn (``tobeliran``)."""
    start = rng.randrange(2)
    return "".join(rng.choice(_CONSONANTS if (i + start) % 2 == 0 else _VOWELS) for i in range(length))
