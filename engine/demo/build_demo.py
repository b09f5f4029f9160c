#!/usr/bin/env python3
"""Build the hand-written instruction-following demo retrieval set.

Every query, instruction and passage below was written by hand for this
project (licence: MIT OR Apache-2.0, same as the project). Running this
script regenerates, deterministically:

    corpus.jsonl, queries.jsonl, qrels/og.tsv, qrels/changed.tsv,
    qrels/reversed.tsv, README.md

and then runs consistency checks and prints the counts.

Data model: each topic has one query, an `instruction_changed` (a
constraint) and an `instruction_reversed` (the same constraint with the
polarity flipped). `changed_docs` are on-topic passages that satisfy
instruction_changed; `reversed_docs` are on-topic passages that satisfy
instruction_reversed. `distractors` are near-topic passages that are not
relevant to the bare query at all (judged 0 in every mode).

Usage:  python3 build_demo.py
"""

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent

TOPICS = []


def topic(qid, slug, query, changed, reversed_, changed_docs, reversed_docs,
          distractors=(), constraint=""):
    TOPICS.append({
        "qid": qid,
        "slug": slug,
        "query": query,
        "changed": changed,
        "reversed": reversed_,
        "changed_docs": list(changed_docs),
        "reversed_docs": list(reversed_docs),
        "distractors": list(distractors),
        "constraint": constraint,
    })


# ---------------------------------------------------------------------------
# q01 learning Python -- audience level
# ---------------------------------------------------------------------------
topic(
    "q01", "python",
    "how to start learning Python programming",
    "Only show material written for absolute beginners who have never written a line of code.",
    "I'm already an experienced developer in another language; only show material that assumes solid prior programming experience.",
    [
        ("Your very first Python program",
         "This guide assumes you have never programmed before. First, install Python from the official website, then open the program called IDLE. Type print('Hello, world') and press Enter. The words appear on the screen: you have just written your first line of code. Don't worry about what print means yet; we will come back to it in the next lesson."),
        ("What is a variable? A gentle introduction",
         "If you are new to programming, think of a variable as a labelled box. In Python you write age = 12 and the box called age now holds the number 12. You can look inside the box later with print(age). No prior experience is needed for this course: every idea is explained from scratch, and there is no maths beyond simple addition."),
        ("Python for complete beginners: a four-week plan",
         "Week 1: install Python and learn to type simple commands. Week 2: numbers, text and variables. Week 3: making decisions with if. Week 4: repeating things with loops. This plan is for people who have never coded. Spend about thirty minutes a day, and don't be discouraged by error messages; everyone gets them at the start."),
        ("Ask a tutor: I'm 54 and have never used a terminal",
         "Q: I've never programmed and the black command window makes me nervous. Can I still learn Python? A: Absolutely. Many beginners start in a browser-based editor, so they never touch a terminal at all. Begin by typing small calculations like 2 + 3, then print your own name. Go slowly; curiosity matters far more than age."),
        ("Learning Python with turtle drawings",
         "For first-time coders, the turtle module is a friendly start. You give a little arrow instructions such as forward(100) and left(90), and it draws lines on the screen. Children and adults with no programming background quickly see the effect of each command, which makes loops feel concrete: repeat those two commands four times and you get a square."),
    ],
    [
        ("Python for Java and C# developers",
         "You already know static typing, classes and interfaces, so this guide skips the basics. The key adjustments are duck typing instead of interfaces, typing.Protocol for structural subtyping, and the fact that functions and classes are first-class objects. We also explain how the GIL affects your threading assumptions and when to reach for multiprocessing instead."),
        ("Idiomatic Python for experienced programmers",
         "If you come from another language, your first Python will read like a translation. Learn the idioms: comprehensions instead of index loops, context managers for resources, tuple unpacking, and generators for lazy pipelines. This article assumes you are comfortable with closures, iterators and basic complexity analysis, and focuses on code a seasoned reviewer would accept."),
        ("Deep dive: descriptors and metaclasses",
         "Once you are fluent in another object-oriented language, Python's attribute lookup rules are worth studying in detail. property, staticmethod and classmethod are all built on the descriptor protocol (__get__ and __set__). Metaclasses then let you customise class creation itself. Prerequisites: several years of OOP experience and familiarity with Python's data model."),
        ("Moving from R to Python for data engineering",
         "This course is aimed at analysts who have written production R code for years. We map dplyr verbs to pandas and Polars, compare their evaluation models, and show how to package a library with pyproject.toml, type-check it with mypy and test it with pytest fixtures. Familiarity with version control and CI pipelines is assumed throughout."),
        ("Async Python for backend engineers",
         "You have shipped services in Go or Node.js and now need Python. asyncio runs coroutines on a single-threaded event loop, and control only changes hands at await points. We compare this with goroutines, cover structured concurrency with TaskGroup, and explain why one blocking call stalls the whole loop. Basic programming concepts are not explained here."),
    ],
    distractors=[
        ("Caring for a pet ball python",
         "Ball pythons are docile snakes that do well in captivity. Keep the enclosure between 26 and 32 °C with a warm side and a cool side, offer a frozen-thawed rodent every one to two weeks, and provide at least two hides. Stuck shed usually means the humidity is too low; aim for 50 to 60 percent."),
    ],
    constraint="audience level (beginner vs experienced)",
)

# ---------------------------------------------------------------------------
# q02 sourdough -- form: numbered steps vs narrative prose
# ---------------------------------------------------------------------------
topic(
    "q02", "sourdough",
    "how to bake sourdough bread at home",
    "Give me the instructions as a numbered, step-by-step list.",
    "I'd rather read a narrative or essay in flowing prose, not a numbered list of steps.",
    [
        ("Basic sourdough loaf in eight steps",
         "1. Mix 350 g water with 100 g active starter. 2. Add 500 g bread flour and rest 45 minutes. 3. Add 10 g salt and squeeze it in. 4. Do four sets of stretch-and-folds, 30 minutes apart. 5. Let the dough rise until about half again as big. 6. Shape a tight ball and place it in a floured basket. 7. Refrigerate overnight. 8. Bake in a preheated Dutch oven at 250 °C, 20 minutes covered and 20 uncovered."),
        ("Feeding your starter, step by step",
         "Step 1: Discard all but 50 g of starter. Step 2: Add 50 g flour and 50 g lukewarm water. Step 3: Stir until no dry flour remains and scrape down the sides of the jar. Step 4: Mark the level with a rubber band. Step 5: Wait until it doubles, usually four to eight hours, then bake with it or return it to the fridge."),
        ("Shaping a sourdough boule: quick checklist",
         "Step 1 - Tip the risen dough onto a lightly floured counter. Step 2 - Fold the edges into the centre to form a rough round. Step 3 - Flip it seam-side down. Step 4 - Drag it towards you with cupped hands to build surface tension. Step 5 - Rest it for 20 minutes, then repeat once. Step 6 - Move it seam-side up into a banneton dusted with rice flour."),
        ("Scoring and baking: a numbered guide",
         "1) Put a Dutch oven in the oven and heat to 250 °C for 45 minutes. 2) Turn the cold dough out onto baking paper. 3) Score one decisive slash at a shallow angle with a razor blade. 4) Lower it into the pot and cover. 5) Bake 20 minutes, then remove the lid and drop to 230 °C. 6) Bake until deep brown. 7) Cool for at least an hour before slicing."),
        ("A weekend sourdough schedule",
         "Friday, 9 pm. Step 1: feed the starter. Saturday, 9 am. Step 2: mix flour and water and let them rest. 10 am. Step 3: add the starter and salt. 10:30 am to 12:30 pm. Step 4: stretch and fold every half hour. 4 pm. Step 5: shape the dough and put it in the fridge. Sunday, 8 am. Step 6: bake straight from the fridge."),
    ],
    [
        ("The loaf that finally worked",
         "For months my sourdough came out flat and gummy. I blamed the flour, then the oven, then the weather. What changed everything was watching the dough instead of the clock. One warm July afternoon the rise finished in four hours rather than six, the dough jiggled and domed, and for once I shaped it at the right moment. The crumb was open, the crust crackled as it cooled, and the kitchen smelled like a bakery."),
        ("Why sourdough rises: a short essay",
         "A sourdough starter is a small ecosystem of wild yeasts and lactic acid bacteria living in flour and water. The yeasts produce the gas that lifts the dough, while the bacteria make the acids responsible for its tang and keeping quality. Baking it at home is therefore less about obeying a recipe than about managing warmth and time so that these organisms work in balance."),
        ("My grandmother's crock",
         "My grandmother kept her starter in a stoneware crock on top of the refrigerator, where the motor kept it warm. She never weighed anything. She added flour until the dough felt right, left it under a damp tea towel through the afternoon, and baked it in a cast-iron pot whose lid had long lost its handle. I now bake at home the same way, trusting my hands more than any scale."),
        ("Notes from a weekend bread class",
         "The instructor spent most of the morning talking about hydration, explaining that wetter doughs give a more open crumb but are harder to handle. She let each of us feel a stiff dough and a slack one side by side. By lunchtime the difference was obvious in our hands, and the loaves we carried home that evening showed it too: mine was a little lopsided but full of irregular holes."),
        ("Sourdough in a small apartment",
         "Living in a studio flat with a tiny oven has shaped how I bake. I make smaller loaves that fit on a pizza stone, and I lean on the fridge to slow everything down so the schedule fits around work. Over a year of weekends I have learned that a long, cold proof forgives almost any earlier mistake, and that a tray of boiling water on the oven floor is a decent stand-in for a lidded pot."),
    ],
    constraint="form (numbered step-by-step list vs narrative prose)",
)

# ---------------------------------------------------------------------------
# q03 marathon -- publication date
# ---------------------------------------------------------------------------
topic(
    "q03", "marathon",
    "training plan for running my first marathon",
    "Exclude anything published before 2020; I only want material dated 2020 or later.",
    "Only include material that was published before 2020.",
    [
        ("Sixteen weeks to your first marathon (updated January 2023)",
         "Updated January 2023. Most first-timers do best with a 16-week plan built around four runs a week: two easy runs, one midweek run with some faster kilometres, and a weekend long run that grows from 10 km to about 32 km. Every fourth week, cut the volume by a third so your body can absorb the training."),
        ("Coach's column, 8 May 2021",
         "8 May 2021. After a year of cancelled races, many readers are signing up for a first marathon this autumn. My advice: build the long run slowly, adding no more than 2 km each week, and rehearse your race-day breakfast and gels during those runs. Nothing on race day should be new."),
        ("Race diary: my first marathon, autumn 2022",
         "Written in September 2022. I followed an 18-week plan and peaked at 55 km a week. The longest run was 32 km, three weeks before race day. The taper felt strange; I was restless and convinced I was losing fitness. But on the day my legs stayed fresh until about kilometre 35, and I finished smiling."),
        ("Run-walk plan for new marathoners (2024 edition)",
         "This 2024 edition of our beginner plan uses a run-walk approach: run four minutes, walk one, even on the long runs. Coaches who use it report fewer injuries among new runners, and finishing times suffer far less than people expect. The plan has three runs a week plus one cross-training day."),
        ("Podcast notes, episode 212 (recorded 10 March 2020)",
         "Recorded 10 March 2020. Our guest, a running coach, explained how she builds first-marathon plans: an honest look at current weekly mileage, a target race at least 20 weeks away, and strength work twice a week for hips and calves. She also warned first-timers against chasing a time goal in their debut race."),
    ],
    [
        ("Marathon training for beginners (posted 12 April 2014)",
         "Posted 12 April 2014. If you can run 5 km without stopping, you can train for a marathon in about 20 weeks. Increase your weekly total by no more than ten percent, make one run each week longer than the rest, and keep most of your running at a pace where you could hold a conversation."),
        ("Letters to the running editor, June 2009",
         "June 2009 issue. A reader asks whether she needs to run the full 42 km in training before her first marathon. Our answer: no. Most plans for a first marathon top out at around 32 to 35 km. The extra distance on the day is carried by the taper, the crowds and the adrenaline."),
        ("My first marathon, spring 2018",
         "Blog entry, 30 April 2018. Eighteen weeks ago I could barely run 10 km. I stuck to a plan from a running magazine: three weekday runs, a long Sunday run, and rest on Mondays and Fridays. An unexpectedly hot race day made the last 10 km brutal, but I finished in 4:41 and cried at the line."),
        ("Club handout: winter marathon block (November 2016)",
         "Issued by the club committee, November 2016. For members targeting a spring marathon: start the long run at 14 km in December and add 1.5 km a week, with a cut-back week every month. Tuesday evening intervals are optional for first-timers; steady mileage matters more."),
        ("Fuel and hydration for a first marathon (August 2012)",
         "Article from August 2012. Practise drinking on the move during your long training runs, because many novices have never tried it before race day. Aim to take in carbohydrate every 30 to 45 minutes after the first hour, and find out which drinks the race will hand out so your stomach is used to them."),
    ],
    distractors=[
        ("The legend behind the marathon",
         "The modern race takes its name from the plain of Marathon in Greece. According to a later legend, a messenger ran from the battlefield to Athens to announce victory and collapsed after delivering the news. Historians doubt the story, but it inspired the long-distance race held at the first modern Olympic Games in 1896."),
    ],
    constraint="publication date (2020 or later vs before 2020)",
)

# ---------------------------------------------------------------------------
# q04 solar panels -- mentions a price
# ---------------------------------------------------------------------------
topic(
    "q04", "solar",
    "installing solar panels on my house",
    "The document must mention a concrete price or cost figure.",
    "Leave out anything that mentions prices, costs or amounts of money.",
    [
        ("What we paid for a 6 kW rooftop system",
         "Our installer quoted $14,200 for a 6 kW system with fifteen panels and a string inverter, before the federal tax credit. After the credit, our net price came to just under $10,000. Installation took two days, and the utility approved the connection three weeks later."),
        ("Rooftop solar quotes compared",
         "Size | Panels | Quote | Yearly output\n4 kW | 10 | €6,800 | 3,900 kWh\n6 kW | 15 | €8,900 | 5,800 kWh\n8 kW | 20 | €11,300 | 7,700 kWh\nAll three quotes include scaffolding, the inverter and registration with the grid operator. They are for a two-storey house with a south-facing tiled roof."),
        ("Is a home battery worth adding?",
         "Adding a 10 kWh battery to a rooftop solar installation typically adds around £5,000 to £7,000 to the bill. Whether it pays off depends on how much daytime generation you would otherwise export cheaply to the grid, and how much electricity your household uses in the evening."),
        ("Forum: is $1,900 for a panel upgrade reasonable?",
         "My installer wants $1,900 to upgrade my electrical panel before putting solar on the roof. He says the old 100 A panel can't safely handle the extra feed. Is that fair? Reply: Panel upgrades usually run $1,500 to $3,000 depending on the region, so that sounds about right."),
        ("Solar permits and fees in our town",
         "Before installing solar panels on your house, the town requires a building permit ($250) and an electrical inspection ($90). Your installer normally files the paperwork, but check the quote to see whether these fees are included or will be billed separately."),
    ],
    [
        ("Is my roof suitable for solar?",
         "Before anything else, check orientation and shade. In the northern hemisphere a south-facing roof is ideal, though east and west faces still work well. Look for trees or chimneys that cast shadows at midday. The roof covering should have plenty of life left, since taking panels down later to re-roof is a hassle."),
        ("What happens on installation day",
         "The crew usually arrives early to put up scaffolding or safety lines. Mounting rails are bolted into the rafters, flashing is fitted to keep water out, and the panels are clipped onto the rails. An electrician then runs cables to the inverter and connects the system to your consumer unit. Most houses are finished within a day or two."),
        ("Microinverters versus string inverters",
         "A string inverter converts the output of all the panels together, so a single shaded panel can drag down the whole row. Microinverters sit under each panel and convert its power individually. That helps on complicated roofs with partial shade, and it lets you check every panel separately from the monitoring app."),
        ("Cleaning and maintaining rooftop panels",
         "Rain usually keeps panels clean enough, but in dusty areas or under trees a gentle rinse a couple of times a year helps. Never use a pressure washer or abrasive brushes. Keep an eye on the monitoring app: a sudden drop from one panel often points to a loose connector or a bird's nest underneath."),
        ("Getting connected to the grid",
         "After installation, your utility or grid operator has to approve the connection and may swap your meter for a bidirectional one. Do not switch the system on until they give the go-ahead. Keep copies of the commissioning certificate and the wiring diagram; you will need them if you ever sell the house."),
    ],
    constraint="must / must not mention a price",
)

# ---------------------------------------------------------------------------
# q05 houseplants -- genre: forum post vs encyclopedia entry
# ---------------------------------------------------------------------------
topic(
    "q05", "houseplants",
    "why are my houseplant's leaves turning yellow",
    "Only forum posts or discussion threads written by other plant owners.",
    "Only encyclopedia-style reference entries; no forum threads or discussions.",
    [
        ("r/houseplants: pothos yellowing after repotting",
         "Posted by u/leafy_lou in r/houseplants: Repotted my pothos last week and now three leaves are yellow 😢 Did I kill it? Top reply from u/vine_time: Totally normal transplant shock. Don't water again until the top few centimetres are dry, and keep it out of direct sun for a bit. It'll bounce back 🌱"),
        ("Thread: monstera lower leaves going yellow",
         "Original post by greenthumb_88: My monstera's oldest leaves are turning yellow one at a time, but new growth looks fine. Reply by FernGully: If it's only the oldest leaves, the plant is probably just recycling nutrients. If lots go yellow at once, check the roots for rot. Reply by greenthumb_88: Thanks, the roots look white and firm!"),
        ("Forum: yellow leaves on my peace lily",
         "Posted in Indoor Plants > Troubleshooting by mariek: My peace lily has yellow leaves with brown tips. I water it every Sunday no matter what. Could that be the problem? Reply from a moderator: Watering on a fixed schedule is the number one cause we see on this board. Push a finger into the soil and only water when it feels dry."),
        ("r/plantclinic: fiddle leaf fig yellowing every winter",
         "u/cold_apartment wrote in r/plantclinic: Every winter my fiddle leaf fig drops a couple of yellow leaves. It stands next to a draughty window. Reply from u/ficus_fan: Move it away from the draught and the radiator; they hate temperature swings. Also water less in winter, since it's barely growing."),
        ("Discussion: can tap water turn leaves yellow?",
         "A member of our plant-swap forum asked whether hard tap water could be yellowing her calathea. Several people replied. One switched to rainwater and saw the new leaves come in green; another said her yellowing stopped once she fixed overwatering instead. The consensus in the thread: rule out watering problems first."),
    ],
    [
        ("Chlorosis (plants)",
         "Chlorosis is a condition in which leaves produce insufficient chlorophyll and therefore appear pale green, yellow or yellowish white. In potted houseplants, common causes include waterlogged soil, root damage, deficiencies of nitrogen, iron or magnesium, and alkaline growing media that block nutrient uptake."),
        ("Overwatering",
         "Overwatering is the application of more water than a potted plant can use or drain away. Saturated soil displaces oxygen from the root zone and can lead to root rot. Characteristic symptoms in houseplants include yellowing lower leaves, wilting despite moist soil, and a sour smell from the pot."),
        ("Leaf senescence",
         "Leaf senescence is the final stage of leaf development, during which nutrients are withdrawn from the leaf and moved to younger tissue. The leaf turns yellow as chlorophyll breaks down. In indoor plants, occasional yellowing of the oldest leaves is therefore a normal physiological process rather than a sign of disease."),
        ("Spider mite",
         "Spider mites (family Tetranychidae) are tiny arachnids that feed on the contents of plant cells. Infestations on houseplants cause fine yellow stippling on the leaves, which may later turn entirely yellow and drop. Fine webbing on the undersides of leaves is diagnostic. The mites are favoured by warm, dry indoor air."),
        ("Nitrogen deficiency",
         "Nitrogen deficiency in plants is characterised by a uniform yellowing that begins in the older, lower leaves, because nitrogen is mobile and is relocated to new growth. In houseplants it is most often seen in specimens that have not been repotted or fertilised for a long period."),
    ],
    constraint="genre (forum post vs encyclopedia entry)",
)

# ---------------------------------------------------------------------------
# q06 guitar -- must / must not name a brand
# ---------------------------------------------------------------------------
topic(
    "q06", "guitar",
    "tips for learning to play the acoustic guitar",
    "The text should name at least one specific brand or manufacturer (of guitars, strings, accessories or apps).",
    "Avoid any text that names a brand, manufacturer or product line.",
    [
        ("Choosing a first acoustic guitar",
         "For a first acoustic, many teachers point students towards a Yamaha FG800 or a similar entry-level dreadnought. Check that the strings sit low over the fretboard, because a high action makes chords painful to learn. A proper setup at the shop matters more than the name on the headstock."),
        ("Lighter strings for sore fingertips",
         "If your fingertips are sore in the first weeks, try a light-gauge set such as D'Addario EJ16 or Martin Authentic Lights. They need less pressure to fret cleanly. Combine them with short practice sessions of fifteen minutes, several times a day, and calluses will form within a month."),
        ("Apps that help beginners practise",
         "Apps like Yousician and Fender Play listen through your phone's microphone and tell you whether you hit the right notes. They won't replace a teacher, but they make daily practice feel like a game, which helps many adult learners stick with the guitar through the frustrating first month."),
        ("Tune up before every session",
         "Always tune before you practise; an out-of-tune guitar trains your ear badly. A clip-on tuner such as the Snark SN-5 works even in noisy rooms. Start with the low E string and work up to high E, then re-check the low E at the end, because tuning the others shifts it slightly."),
        ("Capo tricks for new players",
         "A capo lets you play songs in different keys while keeping the same easy chord shapes. A Kyser quick-change capo clamps on with one hand, which is handy between songs. Put it on the second fret and play G, C and D shapes to accompany a singer who finds the original key too low."),
    ],
    [
        ("Your first three chords",
         "Start with E minor, G and C. E minor needs just two fingers, so you can strum it on day one. Practise switching between chords slowly without strumming, placing all your fingers at once rather than one by one. Speed comes later; clean changes come first."),
        ("Why a metronome matters",
         "Beginners often speed up in easy sections and slow down at hard chord changes. Practising with a metronome at a slow tempo, say 60 beats per minute, trains steady time. Only raise the tempo when you can play the passage cleanly three times in a row."),
        ("Posture and hand position",
         "Sit up straight with the waist of the guitar resting on your right leg if you are right-handed. Keep your fretting thumb behind the neck, roughly opposite your middle finger, so your fingers can arch over the strings. Tension in the shoulder or wrist is a sign to stop, shake out and reset."),
        ("Learning songs by ear",
         "Once you know a handful of chords, try working out simple songs by ear. Hum the melody, find the first note on the low strings, then listen for where the harmony changes. It is slow at first, but it builds the connection between what you hear and what your hands do on the fretboard."),
        ("How long should I practise each day?",
         "Consistency beats marathon sessions. Twenty minutes every day will take you further than three hours on a Sunday. Split the time: five minutes warming up, ten on a new skill such as a chord change or strumming pattern, and five playing something you already enjoy."),
    ],
    constraint="must / must not name a brand",
)
