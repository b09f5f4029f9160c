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
         "Thread in the Plant Swap Forum, started by calathea_carla: Could my hard tap water be turning my calathea's leaves yellow? Reply from rainbarrel_rob: I switched to rainwater and the new leaves came in green. Reply from jo_grows: Mine stopped yellowing once I fixed my overwatering, same tap water. Rule out watering problems first."),
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

# ---------------------------------------------------------------------------
# q07 electric cars -- genre: news article vs forum post
# ---------------------------------------------------------------------------
topic(
    "q07", "ev",
    "electric car battery range in cold weather",
    "I only want news articles published by media outlets.",
    "Only owner forum posts or discussion threads, please; skip news reporting.",
    [
        ("Cold snap leaves EV drivers waiting at chargers",
         "RIVERTON, 17 January 2024 (The Valley Herald) - Sub-zero temperatures this week left dozens of electric car owners queuing at public fast chargers, where charging slowed sharply because batteries were too cold to accept full power. Energy analysts quoted by the paper advised drivers to warm their batteries while still plugged in at home."),
        ("Motoring club test: winter trims EV range by up to a third",
         "5 February 2023 (Northern Motor News) - Electric cars lost between a tenth and a third of their advertised range in a winter road test carried out by a regional motoring club at temperatures around minus ten degrees. Models fitted with heat pumps fared best, the club said in a statement on Monday."),
        ("Carmaker to fit heat pumps as standard",
         "The Auto Ledger, 3 October 2022 - A carmaker said on Tuesday it would fit heat pumps as standard to its entry-level electric models from next year, citing customer complaints about reduced range in winter. The company said cabin heating with resistive heaters could use a large share of the battery on short trips."),
        ("Council approves covered charging bays",
         "Northfield Gazette, 9 December 2021 - The town council has approved covered charging bays at two car parks after residents complained of losing range and struggling with frozen charge-port flaps during last winter's icy spell. Work is due to begin in the spring, a council spokesperson told the Gazette."),
        ("Consumer group issues winter driving advice for EV owners",
         "Consumer Weekly, 28 November 2023 - Ahead of the winter, a national consumer group has published guidance for electric car owners, reporting that cold batteries and cabin heating together are the main reasons for shorter range. The group recommends preconditioning, using seat heaters, and keeping tyres properly inflated."),
    ],
    [
        ("r/electricvehicles: lost 40% range overnight?",
         "Posted by u/frostbitten_ev in r/electricvehicles: Woke up to minus 15 and my car showed 40% less range than last night. Is my battery dying? Top reply from u/kwh_nerd: No, it's cold. The estimate drops because the pack is chilly; it'll recover as it warms up. Schedule departure so it preconditions on the charger ⚡"),
        ("Owners' forum: do seat heaters really save range?",
         "Thread started by Maja_K on an owners' club forum: Been driving with the cabin heat off and just the heated seat and steering wheel. Anyone actually measured the difference? Reply from oldvolt: I did a week each way on my commute. Seats only used noticeably less energy per km. Reply from Maja_K: Brilliant, sticking with it."),
        ("Forum post: first winter with my EV in Finland",
         "Posted by tuomas_r in the Nordic EV drivers forum: First winter with my EV. At minus 20 I get roughly 60% of the summer range, which is still plenty for my commute. Biggest lesson: charge in the evening and leave it plugged in so it can warm the battery before I leave. Anyone else seeing similar numbers?"),
        ("Reddit thread: road trip in a cold snap",
         "u/roadtripper22 in r/evroadtrips: Did 500 km in freezing weather last weekend. Planned a stop every 150 km instead of 250 and it was fine. Tip from the comments by u/amp_hour: navigate to the fast charger in the car's own sat-nav so it pre-warms the battery, otherwise you'll charge at a crawl."),
        ("Discussion board: is a heat pump worth the extra?",
         "Question from member dave_in_duluth on a car-owners discussion board: Trying to decide between two trims of the same EV, one with a heat pump. Does it matter that much in cold weather? Replies were split: owners in snowy states swore by it, while a member in a milder climate said he barely noticed the difference."),
    ],
    constraint="genre (news article vs forum post)",
)

# ---------------------------------------------------------------------------
# q08 coffee -- length
# ---------------------------------------------------------------------------
topic(
    "q08", "coffee",
    "how to brew good coffee at home",
    "Keep it brief: only passages of 50 words or fewer.",
    "I want thorough, detailed explanations of more than 80 words.",
    [
        ("Quick tip: grind right before brewing",
         "Grind your beans just before you brew. Ground coffee loses aroma within minutes, so even a cheap burr grinder at home beats the best pre-ground bag. Match the grind to the method: fine for espresso, medium for drip, coarse for a French press."),
        ("The 1:16 ratio",
         "A reliable starting point for home brewing is one part coffee to sixteen parts water by weight, for example 15 g of coffee to 240 g of water. Taste the cup, then adjust by a gram or two until it suits you."),
        ("Water temperature in one line",
         "Brew with water just off the boil, around 92 to 96 °C. Hotter water pulls out bitterness; cooler water leaves coffee sour and thin. If you have no thermometer, let the kettle rest for thirty seconds after it clicks off."),
        ("French press in brief",
         "Coarse grind, four minutes of steeping, a gentle plunge, and pour immediately. Coffee left sitting on the grounds keeps extracting and turns bitter. That is really all there is to a good French press at home."),
        ("Advice from a café owner in Lisboa",
         "'Fresh beans, clean equipment, filtered water,' says the owner of a small café in Lisboa. 'People buy expensive machines and never descale them. Clean the grinder and the pot every week and your coffee at home will taste better.'"),
    ],
    [
        ("A complete guide to pour-over coffee at home",
         "Pour-over brewing rewards a little patience with a clean, bright cup, and it needs surprisingly little equipment: a cone dripper, paper filters, a kettle, a scale and a grinder. Start by heating water to roughly 94 °C. While it heats, weigh out 18 g of whole beans and grind them to the texture of coarse sand. Place a filter in the dripper and rinse it thoroughly with hot water; this removes the papery taste and warms both the cone and the cup underneath. Discard that rinse water before you continue.\n\nAdd the ground coffee, shake the dripper gently so the bed is level, and zero the scale. Pour about 40 g of water in a slow spiral, just enough to wet all the grounds, and wait thirty to forty-five seconds. This pause, often called the bloom, lets trapped carbon dioxide escape; very fresh coffee will swell and bubble noticeably. Then continue pouring in slow, steady circles, avoiding the filter walls, until the scale reads 300 g. Try to finish pouring by about two minutes.\n\nThe water should drain completely somewhere between three and four minutes in total. If it runs through much faster and the cup tastes sour or weak, grind finer next time. If it drains slowly and tastes harsh or bitter, grind coarser. Change only one variable at a time, and write down what you did. Within a week of mornings you will have a recipe that is genuinely yours, and a clear sense of how each adjustment changes the taste."),
        ("Understanding extraction",
         "Every brewing method is a way of controlling extraction: how much of the soluble material in the ground coffee ends up in your cup. Acids dissolve first, then sugars, and finally the heavier, bitter compounds. An under-extracted cup tastes sour, salty or hollow because the sweetness never arrived; an over-extracted cup tastes bitter and drying because too much of the heavy material came through. Grind size, water temperature, contact time and agitation all shift extraction, so when a home brew tastes wrong, diagnose it in those terms before buying new equipment."),
        ("Espresso at home: what actually matters",
         "Home espresso is the most demanding way to brew coffee, and most of the difficulty comes from the grinder rather than the machine. Because water is forced through a tightly packed puck in under half a minute, tiny changes in grind size have large effects. A common starting recipe is 18 g of coffee in and about 36 g of liquid out in 25 to 30 seconds. Distribute the grounds evenly before tamping, tamp level rather than especially hard, and keep the portafilter hot. Adjust the grind, not the dose, when shots run too fast or too slow."),
        ("Cold brew, explained properly",
         "Cold brew is not simply chilled hot coffee. Steeping coarsely ground beans in cold water for twelve to eighteen hours extracts fewer of the acids and aromatic compounds that hot water dissolves quickly, which gives a smooth, chocolatey, low-acidity drink. Use roughly one part coffee to eight parts water for a concentrate, steep it in the fridge, then filter it through paper to remove silt. Dilute with water or milk to taste. The concentrate keeps for about a week refrigerated, so a single batch covers several mornings."),
        ("Choosing beans for brewing at home",
         "The beans matter more than any gadget. Buy whole beans from a roaster that prints a roast date on the bag, and use them between about one and four weeks after roasting; before that they can be gassy, after that they fade. Lighter roasts show fruit and floral notes and suit filter methods, while medium and darker roasts give body and chocolate notes that stand up to milk. Store beans in an airtight container away from light and heat, and buy smaller bags more often rather than one large bag that goes stale."),
    ],
    constraint="length (50 words or fewer vs more than 80 words)",
)

# ---------------------------------------------------------------------------
# q09 Lisbon -- point of view: first-person account vs impersonal guide
# ---------------------------------------------------------------------------
topic(
    "q09", "lisbon",
    "what to see on a weekend trip to Lisbon",
    "Only personal travel accounts written in the first person.",
    "Give me impersonal, guidebook-style descriptions without personal anecdotes or first-person narration.",
    [
        ("Two days in Lisbon: my diary",
         "We landed on Friday morning and went straight to Alfama. I got hopelessly lost in the alleys below the Castelo de São Jorge, which turned out to be the best part of the day: washing lines, grilled sardines, an old man singing to himself. By evening my legs ached from the hills, and I still think that first wander was worth more than any museum."),
        ("I finally tried the real pastéis de nata",
         "I had eaten custard tarts at home for years, but nothing prepared me for the warm pastéis de nata in Belém. I queued for twenty minutes, sat at a marble table and dusted mine with cinnamon. Afterwards I walked along the river to the tower, full and happy, and decided this was my favourite Saturday morning of the year."),
        ("Riding tram 28 (and why I got off early)",
         "Everyone told me to ride tram 28, so I did, squeezed between a backpack and a window. The route through Graça and past the cathedral is lovely, but it was so crowded I could barely see. I hopped off after a few stops and walked the rest, which I'd recommend: I found a tiny miradouro and had it almost to myself."),
        ("An evening of fado in Alfama",
         "On our second night my partner and I booked dinner at a small fado house in Alfama. The lights dimmed, the guitarist started, and the whole room went silent. I didn't understand most of the words, but I understood the saudade. We stayed long past midnight and walked home through empty streets still humming."),
        ("Sunset hopping between miradouros",
         "My plan for Sunday was simple: chase the sunset. I started at the Miradouro da Graça with a coffee, then climbed up to the Senhora do Monte viewpoint, which I thought had the better view over the red roofs and the Tejo. I ended the day at Santa Catarina with a cold drink, watching the ferries cross as the light faded."),
    ],
    [
        ("Belém",
         "Belém, on the western edge of Lisbon, is home to several of the city's best-known monuments. The Mosteiro dos Jerónimos, a masterpiece of Manueline architecture, and the Torre de Belém are both UNESCO World Heritage sites. The Padrão dos Descobrimentos stands on the riverfront between them. The district is reached by tram 15 or by train from Cais do Sodré."),
        ("Castelo de São Jorge",
         "The Castelo de São Jorge crowns the highest hill in central Lisbon, above the Alfama district. Its walls and towers date largely from the medieval period, and the terraces offer wide views over the Baixa and the Tejo estuary. Tickets are sold at the entrance; visitors should allow about two hours and expect steep, uneven paths."),
        ("Getting around Lisbon",
         "Central Lisbon is compact but hilly. The metro has four colour-coded lines, and historic trams, funiculars and the Elevador de Santa Justa help with the steepest climbs. A rechargeable travel card covers metro, buses, trams and the river ferries. Walking remains the best way to explore Alfama, Chiado and Bairro Alto, though comfortable shoes are essential on the polished cobbles."),
        ("Baixa and Praça do Comércio",
         "The Baixa is Lisbon's grid-planned downtown, rebuilt after the earthquake of 1755. Its main pedestrian street, Rua Augusta, leads through a triumphal arch onto the Praça do Comércio, a vast riverside square once lined with government offices. Cafés occupy the arcades today, and the square is a common starting point for walking tours."),
        ("Day trip: Sintra",
         "Sintra, about forty minutes from Lisbon by train from Rossio station, is a popular addition to a weekend in the capital. Its wooded hills hold the colourful Palácio da Pena, the Moorish Castle and the gardens of Quinta da Regaleira. Visitor numbers are high in summer, so an early start and advance tickets are recommended."),
    ],
    constraint="point of view / register (first-person account vs impersonal guide)",
)

# ---------------------------------------------------------------------------
# q10 burns -- language register: lay vs clinical
# ---------------------------------------------------------------------------
topic(
    "q10", "burns",
    "first aid for a burn",
    "Write for ordinary people at home: plain everyday language, no medical jargon.",
    "I'm a clinician; only give me professional material written in clinical terminology.",
    [
        ("What to do straight after a burn",
         "Hold the burn under cool running tap water for twenty minutes. Don't use ice, butter or toothpaste; they make things worse. Take off rings or watches near the burn before it swells, then cover it loosely with cling film or a clean plastic bag. If it still hurts, a normal painkiller from the pharmacy can help."),
        ("Kitchen burns and small children",
         "If your child grabs a hot pan or spills a hot drink, get the burned skin under cool running water straight away and keep it there for twenty minutes, even if they protest. Keep the rest of them warm with a towel. Any burn on a baby or toddler that is bigger than a coin should be checked by a doctor."),
        ("Blisters: leave them alone",
         "A burn that blisters has gone a bit deeper than the top layer of skin. Don't pop the blisters: the skin on top protects the raw area underneath from germs. Keep the area clean and loosely covered. If a blister bursts by itself, wash gently with water and put on a non-stick dressing from the chemist."),
        ("When a burn needs a doctor",
         "Most small burns heal at home, but get medical help if the burn is larger than the palm of the person's hand, if it is on the face, hands, feet or private parts, if the skin looks white, leathery or charred, or if it was caused by electricity or chemicals. Call an ambulance if the person is struggling to breathe."),
        ("Soothing a bad sunburn",
         "For sunburn, get out of the sun, take a cool shower and drink plenty of water. A simple moisturiser or aloe gel can make the skin feel less tight. If there are lots of blisters, the person feels sick or dizzy, or a child seems unwell, it's time to see a doctor rather than treat it at home."),
    ],
    [
        ("Initial management of partial-thickness thermal burns",
         "Initial management comprises cessation of the burning process, irrigation with cool running water for 20 minutes (effective up to 3 hours post-injury), removal of constricting items and estimation of total body surface area (TBSA) using a Lund and Browder chart. Superficial erythema is excluded from TBSA calculation. Apply polyvinyl chloride film longitudinally; avoid circumferential wrapping."),
        ("Prehospital assessment of the burned patient",
         "Prehospital assessment follows a primary survey with particular attention to airway compromise: singed nasal hair, carbonaceous sputum, stridor or hoarseness indicate inhalational injury and warrant early senior airway involvement. Consider carbon monoxide toxicity in enclosed-space fires. Document mechanism, time of injury and first-aid duration, and maintain normothermia during cooling."),
        ("Classification of burn depth",
         "Burn depth is classified as epidermal, superficial dermal, deep dermal or full-thickness. Superficial dermal burns are pink, blistered and exquisitely painful with brisk capillary refill. Deep dermal burns appear blotchy red with sluggish or absent capillary refill and reduced sensation. Full-thickness burns are white or leathery, insensate and will not re-epithelialise without surgical intervention."),
        ("Chemical burns: decontamination protocol",
         "For cutaneous chemical exposure, remove contaminated clothing and brush off dry agents before copious irrigation with water, continued until the pH of the affected skin normalises. Alkali injuries typically require prolonged irrigation owing to liquefactive necrosis. Avoid neutralising agents, which may cause exothermic reactions. Ocular exposure mandates immediate irrigation and ophthalmology referral."),
        ("Dressing selection for minor burns in primary care",
         "For superficial partial-thickness burns below 10% TBSA in adults, a non-adherent contact layer with an absorbent secondary dressing is appropriate. Review at 48 hours to reassess depth, as burns frequently evolve. Silver-containing dressings may be considered where colonisation is a concern. Refer if healing has not occurred within 14 days, given the elevated risk of hypertrophic scarring."),
    ],
    constraint="language register (plain lay language vs clinical terminology)",
)

# ---------------------------------------------------------------------------
# q11 Rust -- contains code vs prose only
# ---------------------------------------------------------------------------
topic(
    "q11", "rust",
    "how do ownership and borrowing work in Rust",
    "Include actual Rust code: I want passages with a code example.",
    "Explain it in prose only; skip anything that contains code snippets.",
    [
        ("A move, in three lines",
         """Assigning a String moves it: `let s1 = String::from("hello"); let s2 = s1; println!("{}", s1);` fails to compile with error E0382, borrow of moved value. After the move, only s2 owns the heap buffer, so the compiler refuses any later use of s1. Integers don't behave this way because i32 implements Copy."""),
        ("Borrowing with references",
         """Instead of giving a value away, lend it: `fn length(s: &String) -> usize { s.len() }` can be called as `let n = length(&name);` and name is still usable afterwards. The ampersand creates a shared reference; the function can read the string but not change it, and ownership never leaves the caller."""),
        ("Mutable borrows are exclusive",
         """This does not compile: `let mut v = vec![1, 2, 3]; let first = &v[0]; v.push(4); println!("{}", first);` The push needs a mutable borrow of v while first still holds a shared one. Because push may reallocate the buffer, first could end up dangling, so the borrow checker rejects it with E0502."""),
        ("When cloning is the right answer",
         """Sometimes you genuinely need two owners of the same data. `let a = vec![1, 2, 3]; let b = a.clone(); println!("{:?} {:?}", a, b);` compiles because clone makes a deep copy, so a and b own separate buffers. Clone is explicit on purpose: it makes the cost of copying heap data visible in the code."""),
        ("Lifetimes in function signatures",
         """When a function returns a reference, Rust must know which input it borrows from: `fn longest<'a>(x: &'a str, y: &'a str) -> &'a str { if x.len() > y.len() { x } else { y } }` The annotation says the result lives no longer than the shorter of the two inputs, so callers cannot keep it around after either string is dropped."""),
    ],
    [
        ("Ownership in plain words",
         "In Rust, every value has exactly one owner at a time, usually a variable. When the owner goes out of scope, the value is cleaned up automatically. Handing a value to another variable or function transfers ownership, and the old name can no longer be used. This simple rule replaces both manual freeing and a garbage collector."),
        ("Why the borrow checker exists",
         "The borrow checker is the part of the Rust compiler that enforces ownership and borrowing rules before the program ever runs. Its purpose is to rule out whole classes of bugs, such as using memory after it has been freed, freeing it twice, or two threads writing to the same data at once, without paying for a runtime garbage collector."),
        ("Readers or a writer, never both",
         "Borrowing follows one rule that is easy to state: at any moment you may have either any number of read-only borrows of a value or exactly one mutable borrow, but not both. Read-only borrows let many parts of a program look at data safely; the exclusive borrow guarantees that whoever is changing the data is the only one who can see it."),
        ("How I stopped fighting the borrow checker",
         "For my first month with Rust, the compiler rejected almost everything I wrote. What finally helped was changing how I designed programs: fewer long-lived references, more small functions that take what they need and give it back, and clear decisions about which struct owns which data. Once ownership was obvious on paper, the errors mostly disappeared."),
        ("Ownership compared with garbage collection",
         "Languages such as Java or Go free memory with a garbage collector that periodically finds unreachable objects. Rust instead decides at compile time exactly when each value is dropped, based on ownership. The result is predictable performance with no collector pauses, at the cost of a stricter compiler and a learning curve around borrowing."),
    ],
    distractors=[
        ("Removing rust from cast-iron pans",
         "Surface rust on a cast-iron pan is easy to fix. Scrub the spots with steel wool and warm water until bare metal shows, dry the pan completely over a low flame, then wipe on a thin layer of oil and bake it upside down in a hot oven for an hour. Repeat the oiling two or three times for a durable seasoning."),
    ],
    constraint="form (contains code vs prose only)",
)

# ---------------------------------------------------------------------------
# q12 birdwatching -- region: Europe vs North America
# ---------------------------------------------------------------------------
topic(
    "q12", "birding",
    "best places and tips for birdwatching during spring migration",
    "Focus only on Europe.",
    "Only North America, nothing about Europe.",
    [
        ("Spring in the Camargue",
         "The Camargue, in the Rhône delta in southern France, is superb from April to early June. Greater flamingos feed in the lagoons, bee-eaters and rollers arrive from Africa, and the reedbeds fill with singing warblers. Bring a telescope for the étangs, go early before the heat haze, and expect mosquitoes near the marshes at dusk."),
        ("Doñana in April",
         "Doñana National Park in Andalucía, Spain, is one of Europe's great wetlands. In April the marismas hold glossy ibises, spoonbills and purple herons, while the pine woods may give a lucky visitor a Spanish imperial eagle. Access to the core area is restricted, so the visitor centres around El Rocío and guided tours are the best options."),
        ("Białowieża Forest birding",
         "Białowieża Forest on the Polish-Belarusian border is a magnet for birders in May. Its old-growth woodland holds a remarkable range of woodpeckers, including white-backed and three-toed, along with collared and red-breasted flycatchers. Local guides know the active nest holes; hire one for a dawn walk and listen before you look."),
        ("The dawn chorus in an English wood",
         "Late April and early May are the peak of the dawn chorus in English woodland. Arrive before sunrise, stand still, and pick out the robin, blackbird and wren first, then listen for the rich notes of a blackcap. In a few woods in south-east England you might still hear a nightingale, best located by its song rather than by sight."),
        ("Hortobágy in late spring",
         "The Hortobágy puszta in eastern Hungary is famous for its open grasslands and fishponds. In May, red-footed falcons hunt insects over the plain, bee-eaters nest in sandy banks, and the fishponds hold herons, terns and the occasional white-tailed eagle. Stay in one of the villages and explore the tracks by bicycle at first light."),
    ],
    [
        ("Warbler week at Point Pelee",
         "Point Pelee National Park in Ontario, Canada, sits at the southern tip of mainland Canada, sticking into Lake Erie. In early to mid May, exhausted songbirds land there after crossing the lake, and the trees can fill with dozens of warbler species. Arrive at dawn and take the shuttle to the tip, where the first arrivals often appear."),
        ("High Island, Texas: fallout days",
         "On the Texas coast, the woodland sanctuaries of High Island are the first trees many songbirds reach after crossing the Gulf of Mexico. In April, when a northerly front meets birds in flight, a fallout can bring tanagers, orioles, buntings and warblers down by the hundreds. Check the weather forecast and be there in the afternoon."),
        ("The Magee Marsh boardwalk",
         "The boardwalk at Magee Marsh on the south shore of Lake Erie in Ohio is famous for close views of warblers in May. Birds rest in the low trees at eye level before crossing the lake to Canada. Weekends can be crowded, so go on a weekday morning and be patient; the birds move along the boardwalk with you."),
        ("Sandhill cranes on the Platte River",
         "Each March, hundreds of thousands of sandhill cranes stop along the Platte River in central Nebraska to rest and refuel on their way north. The spectacle is best at dawn and dusk, when the birds fly between river roosts and cornfields. Viewing blinds must be booked in advance, and you should dress warmly for the long wait."),
        ("Spring feeders in New England",
         "In New England, spring migration comes to the backyard. From late April, put out orange halves and grape jelly for Baltimore orioles, and a sugar-water feeder for ruby-throated hummingbirds in early May. Rose-breasted grosbeaks love sunflower seed. Keep feeders clean and near cover so migrants can escape passing hawks."),
    ],
    constraint="region (Europe vs North America)",
)

# ---------------------------------------------------------------------------
# q13 budgeting -- uses digital tools vs no software at all
# ---------------------------------------------------------------------------
topic(
    "q13", "budget",
    "how to make a monthly budget and stick to it",
    "It should recommend using an app, a spreadsheet or some other software.",
    "Only methods that need no apps or software at all: pen and paper, cash, envelopes.",
    [
        ("Zero-based budgeting in a spreadsheet",
         "Open a new spreadsheet and make three columns: category, planned and actual. List your take-home pay at the top and give every pound a job until income minus planned spending equals zero. Add a SUM formula at the bottom of each column, and once a week paste in transactions from your bank's export so the actual column stays current."),
        ("Let an app do the tracking",
         "If writing down every purchase feels impossible, a budgeting app can connect to your bank accounts and sort transactions into categories automatically. Set a monthly limit for groceries, eating out and transport, and turn on notifications so the app warns you at eighty percent of a limit rather than after you've blown it."),
        ("Automate your budget with banking-app rules",
         "Most mobile banking apps now let you create rules that run on payday. Set one to move your rent and bills money into a separate account, another to sweep a fixed amount into savings, and leave only the spending money in your main account. Sticking to the budget becomes easy when the app enforces it for you."),
        ("A shared budget for couples",
         "A shared online spreadsheet works well for couples. Each partner adds expenses from their phone, a summary tab totals spending per category with simple formulas, and a chart shows the month at a glance. Schedule a fifteen-minute review on the first Sunday of each month to adjust the plan together."),
        ("Weekly check-ins with your budgeting app",
         "The biggest reason budgets fail is that people stop looking. Every Sunday, open your budgeting app, categorise anything it missed, and compare each category with what you planned. Move money between categories if needed instead of abandoning the plan. The app's month-by-month reports make it obvious where the leaks are."),
    ],
    [
        ("The cash envelope system",
         "At the start of each month, withdraw your spending money in cash and split it into labelled paper envelopes: groceries, fuel, eating out, gifts. When an envelope is empty, that category is finished until next month. Physically handing over notes makes overspending feel real in a way that tapping a card never does."),
        ("Keep a notebook budget",
         "Buy a small notebook that fits in your pocket. On the first page, write your income and the fixed bills for the month. Every time you spend anything, write it down with the date, then total each page on Sunday evening with a pencil. The act of writing by hand makes you pause before buying."),
        ("A 50/30/20 budget on the back of an envelope",
         "You don't need anything fancy for a first budget. On a scrap of paper, write your monthly take-home pay, then split it: half for needs such as rent and food, thirty percent for wants, and twenty percent for savings or debt. Stick the paper on the fridge and check your receipts against it at the end of each week."),
        ("A paper calendar for bills",
         "Hang a paper wall calendar in the kitchen and mark every bill on the day it is due, with the amount written in. Cross each one off in red when it's paid. Seeing the month laid out on the wall makes it obvious which weeks are tight, so you can plan bigger purchases for the weeks with room to spare."),
        ("The jar method",
         "Some families budget with glass jars on a shelf. On payday, put cash for each spending category into its own labelled jar. Anyone who wants to spend from a jar has to take the money out in front of everyone, which keeps the whole household honest, and any coins left at the end of the month go into a savings jar."),
    ],
    constraint="must / must not involve a digital tool (app or spreadsheet vs pen, paper and cash)",
)

# ---------------------------------------------------------------------------
# q14 sleep -- cites research vs personal anecdote
# ---------------------------------------------------------------------------
topic(
    "q14", "sleep",
    "how to fall asleep faster at night",
    "Only material that cites scientific studies or research findings.",
    "I want personal experiences and anecdotes only, with no scientific studies cited.",
    [
        ("Evening screens and the time it takes to fall asleep",
         "A 2015 laboratory study published in PNAS had young adults read either a light-emitting e-reader or a printed book for several hours before bed over consecutive evenings. After e-reader nights, participants took longer to fall asleep, released less melatonin in the evening and felt less alert the next morning, which the researchers linked to the device's bright, short-wavelength light."),
        ("Does a warm bath help you fall asleep?",
         "A 2019 systematic review and meta-analysis of studies on passive body heating found that a warm bath or shower at roughly 40 to 42.5 °C, taken one to two hours before bedtime, was associated with falling asleep faster. The authors proposed that warming the skin speeds up the natural drop in core body temperature that precedes sleep."),
        ("CBT-I: the first-line treatment for insomnia",
         "Clinical guidelines, including a 2016 recommendation from the American College of Physicians, name cognitive behavioural therapy for insomnia (CBT-I) as the first-line treatment for chronic insomnia in adults. Randomised trials show that its components, such as stimulus control and sleep restriction, reduce the time people take to fall asleep, with benefits that persist after treatment ends."),
        ("Caffeine six hours before bed still matters",
         "In a 2013 study in the Journal of Clinical Sleep Medicine, healthy sleepers took 400 mg of caffeine at bedtime, three hours before, or six hours before. Even the dose taken six hours before bed reduced total sleep time by more than an hour compared with a placebo, although many participants did not notice any change themselves."),
        ("Writing a to-do list before bed",
         "In a 2018 sleep-lab experiment, researchers asked 57 young adults to spend five minutes before lights-out either writing a to-do list for the coming days or writing about tasks they had already completed. Those who wrote to-do lists fell asleep significantly faster, and the more specific their lists were, the quicker they dropped off."),
    ],
    [
        ("What worked for me: no phone in the bedroom",
         "For years I scrolled in bed until after midnight and then lay awake. Last spring I bought a cheap alarm clock and started leaving my phone to charge in the kitchen. The first week was twitchy, but by the second I was reading a paperback for ten minutes and nodding off. It's the single biggest change I've made."),
        ("My night-shift reset",
         "After six years of nursing night shifts, my body clock was a mess. What finally helped me fall asleep faster on days off was boringly simple: same wake-up time every day, blackout curtains, a short walk in the morning light, and no coffee after lunch. My colleagues laughed at my eye mask until they borrowed it."),
        ("Counting backwards from 300 in threes",
         "My grandmother swore by counting backwards from three hundred in threes, and I've used her trick since I was a teenager. It's just hard enough that my mind can't wander off to tomorrow's worries, but dull enough to be soothing. I rarely get below two hundred before I'm asleep."),
        ("The most boring book on my shelf",
         "I keep one deliberately dull book on my bedside table, a history of nineteenth-century railway timetables that a friend gave me as a joke. When my head is buzzing, I read a few pages of it. Nothing in it is exciting enough to keep me turning pages, and I'm usually asleep within a chapter."),
        ("My cold-bedroom experiment",
         "This winter I tried turning the radiator in my bedroom off completely and sleeping under a heavier duvet with a window slightly open. I was sceptical, but I now fall asleep noticeably faster than when the room was toasty. My partner complains about the cold feet, so we've compromised on thick socks."),
    ],
    constraint="evidence type (cites research vs personal anecdote)",
)

# ---------------------------------------------------------------------------
# q15 chess -- side: White vs Black
# ---------------------------------------------------------------------------
topic(
    "q15", "chess",
    "good chess openings to learn as a club player",
    "Only openings that you play with the White pieces.",
    "Only openings and defences that you play with the Black pieces.",
    [
        ("The Italian Game",
         "The Italian Game, 1.e4 e5 2.Nf3 Nc6 3.Bc4, is a natural choice for club players who like to play with White. The bishop eyes the weak f7 square, development is quick, and the slower Giuoco Pianissimo lines with c3 and d3 lead to rich middlegames without forcing you to memorise long theory."),
        ("The London System",
         "With White, the London System starts 1.d4 followed by Bf4, e3, Nf3 and c3, building the same solid structure against almost anything Black plays. Its appeal for busy club players is obvious: a small repertoire, familiar plans and few early tactical traps. The drawback is that it can feel passive against well-prepared opponents."),
        ("The Queen's Gambit for White",
         "1.d4 d5 2.c4 offers a pawn to pull Black's centre apart. Playing the Queen's Gambit as White teaches central control, piece activity and typical pawn-structure plans such as the minority attack. Most lines are positional rather than sharp, so a club player can rely on understanding rather than rote memory."),
        ("The Ruy Lopez (Spanish Opening)",
         "After 1.e4 e5 2.Nf3 Nc6 3.Bb5, White puts pressure on the knight that defends e5. The Ruy Lopez is one of the oldest and deepest openings for White, with slow manoeuvring battles and long-term pressure. It rewards players who enjoy strategy; learn the main ideas of the closed lines before memorising variations."),
        ("The English Opening",
         "1.c4 lets White fight for the d5 square from the flank. The English Opening often transposes into reversed Sicilian structures, giving White an extra tempo in familiar positions. It suits positional club players who would rather outmanoeuvre opponents than trade early blows, and it avoids many popular replies to 1.e4 and 1.d4."),
    ],
    [
        ("The Sicilian Defence",
         "Against 1.e4, Black's 1...c5 creates an unbalanced position from the first move. The Sicilian Defence gives Black counterplay on the queenside and the half-open c-file, which makes it the most popular fighting reply for Black. Club players should start with a system such as the Taimanov or the Dragon and learn its typical plans."),
        ("The Caro-Kann Defence",
         "1.e4 c6 2.d4 d5 is the Caro-Kann, a sturdy defence for Black. Unlike the French, it lets Black develop the light-squared bishop outside the pawn chain before playing e6. It leads to solid endgames and is ideal for club players with the Black pieces who value safety and a healthy pawn structure."),
        ("The French Defence",
         "With 1.e4 e6 followed by 2...d5, Black accepts a slightly cramped position in exchange for a rock-solid centre and clear counterattacking plans with c5 and f6. The French Defence teaches pawn-chain strategy, and its structures repeat often enough that a club player can learn them well as Black."),
        ("The King's Indian Defence",
         "Against 1.d4, Black can play Nf6, g6, Bg7, d6 and castle, letting White build a big centre before striking back with e5. The King's Indian Defence is aggressive: in many lines Black launches a kingside pawn storm. It suits club players who like sharp, attacking positions even when playing Black."),
        ("The Scandinavian Defence",
         "1.e4 d5 immediately challenges White's centre. After 2.exd5 Qxd5 3.Nc3, the queen retreats to a5 or d6. The Scandinavian Defence is easy to learn for Black because the opponent's options are limited, and it leads to a simple structure that many club players find comfortable."),
    ],
    constraint="side (White vs Black)",
)

# ---------------------------------------------------------------------------
# q16 heat pumps -- stance: critical vs favourable
# ---------------------------------------------------------------------------
topic(
    "q16", "heatpump",
    "air source heat pumps for heating a home",
    "Only critical or negative takes: complaints, problems and reasons not to install one.",
    "Only positive, favourable accounts from people who are happy with their heat pump.",
    [
        ("Our heat pump regret",
         "We replaced our gas boiler with an air source heat pump two years ago and I honestly wish we hadn't. Our old radiators were too small, so rooms never got properly warm in January, and the electricity bills were higher than the installer's estimate. Replacing the radiators now would mean more disruption and more money."),
        ("Bills went up after switching",
         "Posted on a home-improvement forum: Since the heat pump went in, our winter electricity bill is almost double what the gas used to cost us. The installer blames our poorly insulated loft, but nobody mentioned that before the sale. If your house leaks heat, sort that first or don't bother."),
        ("The constant hum next door",
         "My neighbours installed an outdoor heat pump unit a few metres from our bedroom window. On cold nights it runs for hours and the low hum and fan noise keep me awake. The council says it is within limits, but I'd warn anyone planning one to think carefully about where the unit goes."),
        ("Not right for my draughty old house",
         "I had three surveys for my 1890s stone cottage, and each one found the same problems: solid walls, single glazing and no room for larger radiators. A heat pump would have needed so much insulation work first that it made no sense for me. They are not a universal answer, whatever the adverts say."),
        ("Botched installations are common",
         "A trade inspector writes: I regularly visit homes where air source heat pumps were badly sized or set up with high flow temperatures, so they run inefficiently and owners conclude the technology doesn't work. A shortage of trained installers means too many rushed jobs. Until that is fixed, buyers are taking a real risk."),
    ],
    [
        ("Two winters with a heat pump and we love it",
         "We were nervous about switching, but after two winters with our air source heat pump we wouldn't go back. The house stays at an even 20 degrees all day, there's no boiler to service, and with a sensible tariff our running costs have been lower than gas. The outdoor unit is quieter than our fridge."),
        ("Steady, gentle warmth",
         "What surprised me most about our heat pump is the quality of the heat. Instead of radiators blasting on and off, the system runs low and steady, so every room is comfortable and there are no cold corners in the morning. Our kids say the bathroom floor is the best thing about the house now."),
        ("Lower bills in our bungalow",
         "After we insulated the loft and fitted an air source heat pump, our heating costs fell noticeably compared with the old oil boiler. The installer spent a whole morning doing room-by-room heat loss calculations, which I think is why it works so well. I recommend them to anyone with a reasonably well insulated home."),
        ("Cooling in summer is a bonus",
         "Our air-to-air heat pump heats the house efficiently all winter, and in last summer's heatwave it quietly cooled the bedrooms too. Two systems for the price of one, with no fuel deliveries and no flue. I was sceptical about the claims, but it has exceeded every expectation we had."),
        ("Why our housing co-op chose heat pumps",
         "Our housing co-operative replaced ageing gas boilers in forty flats with air source heat pumps. Tenants report warmer homes and fewer breakdowns, and the maintenance team says servicing is simpler. Members voted overwhelmingly to extend the programme to the remaining buildings next year."),
    ],
    constraint="stance / sentiment (critical vs favourable)",
)

# ---------------------------------------------------------------------------
# q17 composting -- genre: product page vs non-commercial how-to
# ---------------------------------------------------------------------------
topic(
    "q17", "compost",
    "how to start composting kitchen scraps",
    "I'm shopping: only product listings or shop pages selling composting gear.",
    "Only independent how-to information; no product pages or anything trying to sell me something.",
    [
        ("Kitchen Compost Caddy, 5 L, brushed steel",
         "Kitchen Compost Caddy, 5 litres. Price: £24.99. In stock, free delivery over £30. Collect fruit peel, coffee grounds and vegetable scraps on the worktop before taking them out to the heap. Charcoal filter in the lid traps odours; replacement filters sold separately. Rated 4.6 out of 5 from 312 customer reviews. Add to basket."),
        ("Bokashi starter kit: two buckets and bran",
         "Bokashi Starter Kit, now $59.00 (was $69.00). Includes two 16-litre airtight buckets with drain taps and 1 kg of bokashi bran. Ferment all your kitchen scraps, including cooked food, right under the sink. Ships in 2 to 3 business days. Customers also bought: bokashi bran refill, 3 kg. Add to cart."),
        ("Rotating tumbler composter, 160 L",
         "Dual-chamber tumbling composter, 160 L total capacity. Sale price €129. Turn the drum a few times a week for finished compost in as little as eight weeks. Galvanised steel frame, UV-resistant drum, assembly in about 30 minutes. Only 4 left in stock. Buy now and pay in three instalments."),
        ("Worm farm starter set with 500 worms",
         "Urban Worm Farm Starter Set: three stacking trays, a lid, a tap for worm tea, and a voucher for 500 live composting worms shipped separately. Perfect for flats and balconies. $89.95. Customer review: 'Our family's food scraps disappear within a fortnight!' Free returns within 30 days. Add to cart."),
        ("Compostable caddy liners, pack of 150",
         "Compostable Caddy Liners, 7 litre, pack of 150. Just £8.49, or subscribe and save 10%. Certified home-compostable, so the bag goes straight onto the heap with your kitchen scraps. Fits most worktop caddies. Dispatched within 24 hours. Frequently bought together with our 5 L steel caddy. Add to basket."),
    ],
    [
        ("Greens and browns",
         "A healthy compost heap balances greens, which are wet and nitrogen-rich, with browns, which are dry and carbon-rich. Kitchen scraps such as peelings and coffee grounds are greens; cardboard, dry leaves and shredded paper are browns. Aim for roughly equal volumes of each, and add a layer of browns every time you empty the kitchen caddy."),
        ("What not to put in a home compost heap",
         "Most raw fruit and vegetable scraps, tea leaves and eggshells compost well. Leave out meat, fish, dairy and cooked leftovers from an ordinary heap, because they smell and attract rats. Avoid diseased plants, glossy printed paper and pet waste from cats or dogs. When in doubt, leave it out."),
        ("Starting a heap in a small garden",
         "Pick a level, partly shaded spot on bare soil so worms can move in from below. Start with a layer of twigs for airflow, then alternate kitchen scraps with dry leaves or torn cardboard. Keep the heap about as damp as a wrung-out sponge and turn it with a fork every couple of weeks to let air in."),
        ("Composting without a garden",
         "Living in a flat doesn't rule out composting. A small worm bin kept on a balcony or under the sink can process a household's vegetable scraps, provided you feed it little and often and keep it out of direct sun. Another option is a community garden heap or a council food-waste collection."),
        ("Fixing a smelly compost heap",
         "A heap that smells of rotten eggs or ammonia is usually too wet and too green. Mix in plenty of dry browns such as shredded cardboard, turn it to let air in, and check that water can drain away at the base. A healthy heap should smell earthy, like a forest floor after rain."),
    ],
    constraint="genre (product page vs independent how-to)",
)

# ---------------------------------------------------------------------------
# q18 dog recall -- subject age: puppy vs adult dog
# ---------------------------------------------------------------------------
topic(
    "q18", "dog",
    "teaching a dog to come when called",
    "Only advice about young puppies, under roughly six months old.",
    "Only about adult or senior dogs; nothing about puppies.",
    [
        ("Start recall on day one with your puppy",
         "Puppies of eight to twelve weeks naturally want to follow you, so use that window. Crouch down, say your recall word in a happy voice and reward with a tiny treat the moment your puppy reaches you. Practise five times a day indoors before your puppy has finished its vaccinations and is allowed outside."),
        ("The puppy ping-pong game",
         "Sit on the floor at opposite ends of a hallway with a family member. Take turns calling your ten-week-old puppy by name, rewarding each time it runs to you. This game builds an enthusiastic recall while the puppy is still small, curious and keen to stay close to its people."),
        ("Recall during the teenage wobble",
         "Many owners find that a puppy with a great recall at twelve weeks suddenly ignores them at five months. This is normal adolescent independence. Go back to a long line in the park, reward generously, and never call your young pup for something unpleasant, such as the end of playtime, or the word loses its magic."),
        ("Puppy class: first lessons in coming when called",
         "In week two of our puppy class for pups aged nine to sixteen weeks, we work on the name game and a first recall. Owners are asked to use one cue word only, to run backwards as they call so the puppy chases them, and to hand over food rewards at collar level so the pup learns to come right in close."),
        ("Don't chase your puppy",
         "When your four-month-old puppy grabs a sock and runs, resist the urge to chase. To a young dog, being chased is the best game in the world and it teaches them to run away from you. Instead, turn and run the other way while calling cheerfully. Most puppies can't resist following."),
    ],
    [
        ("Rebuilding recall with an adult rescue dog",
         "Adult rescue dogs often arrive with a recall word that already means trouble. With our three-year-old greyhound we chose a brand-new cue, a whistle, and paired it with roast chicken for two weeks at home before trying it in the garden. After two months she was reliably coming back in quiet fields on a long line."),
        ("Recall for a strong-willed adult terrier",
         "Adult terriers are bred to hunt independently, so a perfect recall is a long-term project. Keep your five-year-old terrier on a long line in areas with wildlife, practise in dull places first, and reward every voluntary check-in. When he comes away from something exciting, make the reward even better than the distraction."),
        ("Senior dogs and recall",
         "An older dog who suddenly seems to ignore you may simply not hear you any more. Many senior dogs lose high-frequency hearing first. Teach a visual recall signal, such as a big arm sweep, and use a vibration collar if your vet agrees. Keep sessions short and gentle on ageing joints."),
        ("Proofing recall around other dogs",
         "For a mature dog that already comes back in an empty park, the next challenge is distraction. Work at a distance where your adult dog notices other dogs but can still respond, reward heavily, and close the gap gradually over weeks. Never let the recall word be followed by leaving the fun every single time."),
        ("Why my eight-year-old collie finally listens",
         "My collie was eight when I finally fixed her recall. I had shouted her name for years and she had learned it meant nothing. We switched to a new cue, kept it rare and precious, and paid with cheese every time. Old dogs can absolutely learn new recall habits; it just takes consistency."),
    ],
    constraint="subject age (puppy vs adult or senior dog)",
)

# ---------------------------------------------------------------------------
# q19 tomatoes -- setting: containers vs open ground
# ---------------------------------------------------------------------------
topic(
    "q19", "tomato",
    "how to grow tomatoes at home",
    "Only about growing them in pots or containers, for example on a balcony or patio.",
    "Only about growing them directly in garden beds or open ground, not in containers.",
    [
        ("Tomatoes on a sunny balcony",
         "A south-facing balcony can produce a surprising crop. Choose a compact bush or cherry variety and plant each one in a pot of at least 20 litres with good multi-purpose compost. Containers dry out quickly in summer, so expect to water every day, and twice on hot afternoons. Feed weekly once the first flowers appear."),
        ("Growing tomatoes in grow bags",
         "Grow bags are an easy way to grow tomatoes on a patio. Cut two or three holes in the top, plant a young tomato in each, and push a sturdy cane through the bag or use a frame. Because the compost volume is small, water little and often and feed with a high-potash tomato food every week."),
        ("Hanging baskets of trailing tomatoes",
         "Trailing cherry tomato varieties look lovely in hanging baskets by the back door. Use one plant per basket, line it with a moisture-retaining liner, and mix slow-release fertiliser into the compost. Baskets dry out faster than any other container, so check them every morning in July."),
        ("Choosing the right pot for tomatoes",
         "Bigger is better when growing tomatoes in containers. Terracotta looks nice but dries out fast; plastic or glazed pots hold water longer. Make sure every pot has drainage holes, raise it slightly on feet, and use fresh compost each year rather than reusing last season's tired mix."),
        ("Indoor tomatoes on a windowsill",
         "If you have no outdoor space, a dwarf tomato can grow in a 5-litre pot on a bright windowsill. Turn the pot every few days so the plant doesn't lean towards the glass, and gently tap the flowers to help pollination, since there are no bees indoors. Expect a modest but tasty harvest."),
    ],
    [
        ("Planting tomatoes in the vegetable bed",
         "Dig the bed over and work in a generous layer of garden compost a couple of weeks before planting. Once the risk of frost has passed, set plants about 60 cm apart, burying the stem deeper than it grew in the pot so it roots along its length. Push in a tall stake beside each plant at the same time."),
        ("Crop rotation for tomatoes",
         "Tomatoes belong to the same family as potatoes, and both suffer from blight and soil-borne diseases. In a garden with several beds, avoid planting tomatoes in the same ground where tomatoes or potatoes grew in the last three years. Follow them with peas or beans, which leave the soil in good shape."),
        ("Mulching tomatoes in open ground",
         "After planting tomatoes in the border, spread a thick mulch of straw or compost over the soil around them. Mulch keeps moisture in, stops soil splashing onto the lower leaves during rain, and reduces weeding. Water deeply once or twice a week at the base rather than a light sprinkle every day."),
        ("Raised beds versus flat ground",
         "If your garden soil is heavy clay, tomatoes planted straight into the ground may sulk in cold, wet spring soil. Building permanent raised beds filled with topsoil and compost warms the soil earlier and improves drainage. The plants still root deep into the ground below, unlike in a pot."),
        ("Staking a row of tomatoes in the allotment",
         "On our allotment we grow a long row of cordon tomatoes straight in the soil. Each plant gets a two-metre stake driven well into the ground, and we tie the main stem every week and pinch out side shoots. In August we remove the lower leaves to let air circulate and reduce blight."),
    ],
    constraint="setting (containers vs open ground)",
)

# ---------------------------------------------------------------------------
# q20 flat tyre -- tubeless vs inner tube
# ---------------------------------------------------------------------------
topic(
    "q20", "bike",
    "how to fix a flat bicycle tyre",
    "Only for tubeless tyre setups.",
    "Only for tyres that have an inner tube.",
    [
        ("Plugging a tubeless puncture",
         "If sealant can't close a hole in your tubeless tyre, use a plug kit. Remove whatever caused the puncture, push the forked tool with a sticky rubber strip into the hole, and pull the tool straight out so the strip stays in place. Trim the ends, spin the wheel so sealant coats the plug, and reinflate."),
        ("Topping up tubeless sealant",
         "Many slow leaks in tubeless tyres are simply dried-out sealant. Deflate the tyre, remove the valve core with the little tool on your pump or multi-tool, and inject fresh sealant through the valve. Refit the core, inflate, and rotate the wheel so the liquid spreads around the inside of the tyre."),
        ("When the tubeless tyre won't seat",
         "After a roadside repair, a tubeless tyre sometimes refuses to pop back onto the rim. Soapy water on the bead helps, and a burst of air from a booster pump or CO2 cartridge usually seats it with two satisfying bangs. Only then check for leaks around the rim tape and the valve."),
        ("Big cut in a tubeless tyre",
         "A large sidewall gash may be too big for sealant or plugs. As a get-home fix, put a tyre boot inside the tubeless casing to cover the cut. At home, clean out the old sealant, patch the inside of the tyre with a vulcanising patch made for tubeless casings, and reseal."),
        ("Why your tubeless tyre keeps burping air",
         "Burping happens when a tubeless tyre's bead briefly lifts off the rim under a hard hit, letting air and sealant spray out. It often shows up as a slow flat after a rocky descent. Check the rim tape, add a little pressure, and reseat the bead before topping up the lost sealant."),
    ],
    [
        ("Fixing a puncture with a patch kit",
         "Lever one side of the tyre off the rim and pull out the inner tube. Pump a little air into it and listen or feel for the hole. Roughen the area with sandpaper, spread a thin layer of rubber solution, wait until it's tacky, then press the patch on firmly. Check the tyre for thorns before refitting the tube."),
        ("Swapping in a spare tube at the roadside",
         "On a ride, it's quicker to fit a new inner tube and patch the old one at home. Remove the wheel, use two tyre levers to free one bead, and pull the punctured tube out. Put a little air in the spare so it holds its shape, tuck it in starting at the valve, then work the bead back on with your thumbs."),
        ("Avoiding pinch flats",
         "Two small parallel slits in the inner tube, often called snakebites, mean the tube was pinched between tyre and rim, usually after hitting a kerb with low pressure. Patch both holes or replace the tube, and pump the tyre to the pressure printed on its sidewall before riding again."),
        ("Finding the cause before you fit a new tube",
         "Before you refit a repaired or new inner tube, run your fingers carefully around the inside of the tyre. A tiny shard of glass or a thorn left in the tread will puncture the new tube within minutes. Also check that the rim tape covers every spoke hole, since exposed edges can cut the tube from inside."),
        ("Presta or Schrader valve?",
         "Inner tubes come with two common valve types. Schrader valves are the same as on car tyres; Presta valves are thinner and have a small nut you unscrew before pumping. Buy replacement tubes with the valve type that matches the hole in your rim, and make sure your pump head fits it."),
    ],
    constraint="equipment variant (tubeless vs inner tube)",
)

# ---------------------------------------------------------------------------
# q21 meditation -- duration: 10 minutes or less vs 30 minutes or more
# ---------------------------------------------------------------------------
topic(
    "q21", "meditation",
    "meditation practices to reduce stress",
    "I only have a few minutes: just practices that take ten minutes or less.",
    "Only longer sessions lasting at least thirty minutes.",
    [
        ("The three-minute breathing space",
         "This practice takes three minutes and can be done at your desk. Minute one: notice what you are thinking and feeling without changing it. Minute two: bring your attention to the breath in your belly. Minute three: widen your awareness to your whole body. Then return to your day a little less rushed."),
        ("Box breathing in five minutes",
         "Breathe in for a count of four, hold for four, breathe out for four, hold for four. Repeat for five minutes. Box breathing is popular with nurses and pilots because it is quick, discreet and calms the stress response before a difficult meeting or a hard conversation."),
        ("A ten-minute body scan",
         "Lie down and set a timer for ten minutes. Starting at your toes, move your attention slowly up through your feet, legs, belly, chest, arms and face, noticing sensations without judging them. When your mind wanders to your worries, gently return to the part of the body you had reached."),
        ("Two minutes of noticing",
         "When stress spikes, stop for two minutes. Name five things you can see, four you can hear, three you can feel, two you can smell and one you can taste. This short grounding meditation pulls attention out of anxious thoughts and back into the present moment."),
        ("Seven minutes before bed",
         "End the day with a seven-minute loving-kindness practice. Sit comfortably, and silently repeat phrases such as 'may I be safe, may I be at ease' for yourself, then for someone you love, then for someone who stressed you today. Keep it short and gentle; consistency matters more than length."),
    ],
    [
        ("A 45-minute sitting practice",
         "Set aside forty-five minutes, ideally at the same time each morning. Sit upright on a cushion or chair and rest your attention on the breath. Over a long sit, restlessness and boredom will rise and pass several times; meeting them without reacting is where much of the stress relief comes from."),
        ("The hour-long walking meditation",
         "Choose a quiet path twenty to thirty steps long and walk it slowly back and forth for one hour. Feel the lift, movement and placement of each foot. An hour seems long at first, but walking meditation is easier than sitting for people whose stress shows up as physical restlessness."),
        ("Yoga nidra: a 30-minute guided rest",
         "Yoga nidra is a guided practice of at least thirty minutes, done lying down. A teacher leads you through an intention, a slow rotation of attention around the body, breath awareness and visualisations. Many people find that half an hour of this deep rest leaves them calmer than a nap."),
        ("Planning a half-day mindfulness retreat at home",
         "Block out a morning of about four hours. Alternate thirty-minute sitting periods with thirty minutes of slow walking, keep your phone switched off, and eat a simple lunch in silence at the end. A home retreat like this gives stress a chance to settle in a way short daily sessions rarely do."),
        ("Forty minutes of breath counting",
         "In this longer practice you count each out-breath from one to ten, then start again, for forty minutes. Whenever you lose count, begin again at one without criticising yourself. Over forty minutes the mind usually passes through agitation into a steadier, quieter state."),
    ],
    constraint="duration (10 minutes or less vs 30 minutes or more)",
)

# ---------------------------------------------------------------------------
# q22 night sky photography -- smartphone vs dedicated camera
# ---------------------------------------------------------------------------
topic(
    "q22", "astro",
    "how to photograph the Milky Way",
    "Only techniques using a smartphone.",
    "Only with a dedicated camera such as a DSLR or mirrorless body; nothing about phones.",
    [
        ("Milky Way shots with your phone's night mode",
         "Recent smartphones can capture the Milky Way surprisingly well. Put the phone on a small tripod, switch to night mode and let it take the longest exposure it offers, often up to thirty seconds or more. Tap to focus on a bright star, use the self-timer so your touch doesn't shake the phone, and shoot from a dark site."),
        ("Manual apps for smartphone astrophotography",
         "If your phone's built-in camera app limits exposure, a manual camera app can unlock longer shutter speeds and RAW capture. Set focus to infinity, ISO around 800 to 1600 and a 10 to 15 second exposure, then stack several frames in a phone editing app to reduce noise in the sky."),
        ("Keeping your phone steady at night",
         "Hand-holding a phone for a Milky Way shot will never work. A cheap tripod with a phone clamp, or even the phone propped against a rock, keeps it still. Use voice commands or a Bluetooth remote to trigger the shot, and turn the screen brightness down so your eyes stay adapted to the dark."),
        ("Editing a phone Milky Way photo",
         "Phone night photos of the Milky Way often come out flat and greenish. In your phone's photo editor, lower the highlights slightly, raise contrast and clarity, and cool the white balance towards blue. Don't push noise reduction too far, or the fainter stars will disappear along with the grain."),
        ("Planning a night out with only a smartphone",
         "You don't need expensive gear: my phone and a dark sky were enough. Check a light-pollution map, go on a moonless night, and arrive an hour after sunset. Use a stargazing app on the same phone to find where the galactic core rises, then switch to the camera and frame it over a tree or a hill."),
    ],
    [
        ("Camera settings for the Milky Way",
         "With a DSLR or mirrorless camera on a sturdy tripod, start with a wide lens at its widest aperture, for example f/2.8, ISO 3200, and an exposure of around 20 seconds on a full-frame body. Focus manually on a bright star using magnified live view, and shoot in RAW for the most editing latitude."),
        ("The 500 rule and star trails",
         "To keep stars as points rather than short streaks, a traditional guide is the 500 rule: divide 500 by the lens focal length to get the longest exposure in seconds. With a 20 mm lens on a full-frame camera that gives 25 seconds. On high-resolution sensors, use a stricter rule or shorten the exposure further."),
        ("Using a star tracker with a mirrorless camera",
         "A small star tracker mounted on your tripod rotates the camera to follow the sky, allowing exposures of several minutes with no trailing. That means lower ISO and cleaner images of the Milky Way's core. Polar alignment takes practice, and the foreground will blur, so shoot a separate untracked frame for the landscape."),
        ("Choosing a lens for night sky photography",
         "For Milky Way photography on an interchangeable-lens camera, a fast wide-angle prime between 14 and 24 mm is ideal. Check reviews for coma, which turns stars at the corners into little seagull shapes. An f/1.8 or f/2 lens gathers far more light than a kit zoom at f/3.5."),
        ("Stacking DSLR frames to reduce noise",
         "Instead of one long exposure, shoot fifteen to twenty identical RAW frames with your DSLR, plus a few dark frames with the lens cap on. Stacking software aligns the stars and averages the noise away, giving a smooth sky you can stretch hard in editing without ugly grain."),
    ],
    constraint="equipment (smartphone vs dedicated camera)",
)

# ---------------------------------------------------------------------------
# q23 job interviews -- setting: remote vs in person
# ---------------------------------------------------------------------------
topic(
    "q23", "interview",
    "how to prepare for a job interview",
    "Only about remote interviews held over video call or phone.",
    "Only about in-person interviews at the employer's premises.",
    [
        ("Setting up for a video interview",
         "Test your video platform the day before, on the same device you will use. Put the camera at eye level, sit facing a window or lamp so your face is lit, and tidy whatever is visible behind you. Close other apps and notifications, and have a charger plugged in so your laptop doesn't die mid-answer."),
        ("Phone screens: sounding confident without a face",
         "In a phone interview, your voice carries everything. Stand up while you talk, smile because it changes your tone, and keep your CV and notes spread out in front of you, since the interviewer can't see them. Find a quiet room with good signal, and pause briefly before answering so you don't talk over each other."),
        ("Eye contact on camera",
         "On a video call, looking at the interviewer's face on screen means you appear to be looking down. When you are speaking, look at the camera lens instead; a small sticky note beside it can remind you. Keep the video window near the top of the screen so the difference is small."),
        ("What to do if your connection drops",
         "Technical problems during a remote interview are common and rarely count against you if handled calmly. Before the call, save the interviewer's phone number and email. If the video freezes, rejoin straight away, or send a short message offering to continue by phone. Mention the interruption briefly and move on."),
        ("Recorded one-way video interviews",
         "Some employers now use one-way video interviews, where you record answers to questions that appear on screen. You usually get thirty seconds to think and two or three minutes to answer. Practise with your webcam and a timer, and remember there's no interviewer nodding along, so keep your energy up."),
    ],
    [
        ("Plan your journey to the interview",
         "Do a trial run of the journey to the office a few days before, at the same time of day if you can. Aim to arrive ten minutes early, not thirty; sitting in reception for half an hour just builds nerves. Bring printed copies of your CV, the invitation email and the name of the person you are meeting."),
        ("What to wear to a face-to-face interview",
         "Research what people at the company actually wear, then dress one step smarter. Clean shoes matter more than people think, because interviewers notice them when you walk in. Try the outfit on the day before, including walking and sitting in it, so you aren't tugging at your clothes in the meeting room."),
        ("The handshake and the first minute",
         "In an in-person interview, the first impression starts in reception. Be polite to everyone, stand when the interviewer arrives, make eye contact and offer a firm but brief handshake. Wait to be shown where to sit, and put your bag on the floor rather than the table."),
        ("Panel interviews in the boardroom",
         "When you walk into a room with three or four interviewers, greet each of them and note their names and roles. Answer the person who asked the question, but glance around the whole panel as you speak. Keep a glass of water within reach; the room may be warm and the session long."),
        ("After the on-site interview",
         "On your way out of the building, thank the receptionist as well as the interviewers; some companies ask for their impressions. Later that day, send a short thank-you email mentioning something specific from the conversation, such as the office tour or a project the team showed you."),
    ],
    constraint="setting (remote vs in person)",
)

# ---------------------------------------------------------------------------
# q24 knitting -- must give numbers vs no numbers at all
# ---------------------------------------------------------------------------
topic(
    "q24", "knitting",
    "knitting a simple scarf as a beginner",
    "It must give concrete numbers, such as needle sizes, stitch counts or measurements.",
    "No numbers or measurements at all, please: describe it without any figures.",
    [
        ("A garter-stitch scarf pattern",
         "Cast on 30 stitches using 6 mm needles and chunky yarn. Knit every row until the scarf measures about 150 cm, which will take roughly three 100 g balls. Cast off loosely and weave in the ends. The finished scarf is about 18 cm wide, a comfortable width for a first project."),
        ("Working out how many stitches to cast on",
         "Check the ball band for the gauge, for example 14 stitches to 10 cm on 6 mm needles. For a scarf 20 cm wide, multiply: 20 divided by 10, times 14, gives 28 stitches. Knit a small 12 cm square first to check your own tension, since beginners often knit tighter than the label suggests."),
        ("Ribbed scarf in 2x2 rib",
         "For a scarf that doesn't curl, use 2x2 rib on 5 mm needles. Cast on a multiple of 4 plus 2, for example 34 stitches. Row 1: knit 2, purl 2 to the last 2 stitches, knit 2. Row 2: purl 2, knit 2 to the last 2, purl 2. Repeat until it is 160 cm long."),
        ("How much yarn does a scarf need?",
         "A plain adult scarf around 20 cm by 160 cm uses roughly 300 to 400 metres of aran-weight yarn on 5 mm needles. Chunky yarn on 8 mm needles needs fewer metres but more grams, about 250 to 300 g. Buy one extra ball from the same dye lot in case you run short."),
        ("Adding fringe to your scarf",
         "Cut 40 lengths of yarn, each 30 cm long. Fold 4 strands in half, pull the loop through the cast-on edge with a 5 mm crochet hook, and draw the ends through the loop. Space 5 bunches evenly across each short end, then trim the fringe to an even 12 cm."),
    ],
    [
        ("Why garter stitch is perfect for beginners",
         "Garter stitch means knitting every row, so you only need to learn the knit stitch. The fabric is squishy, lies flat and looks the same on both sides, which is exactly what you want in a scarf. Mistakes also hide well in its bumpy texture, so a new knitter can relax and enjoy the process."),
        ("Choosing yarn for a beginner scarf",
         "Pick a smooth, light-coloured wool or wool blend in a thick weight. Smooth yarn shows you each stitch clearly, a pale shade makes mistakes easy to spot, and thicker yarn grows quickly so you see progress. Avoid fluffy novelty yarns and very dark colours until you are comfortable reading your knitting."),
        ("Keeping your edges neat",
         "Wobbly edges are the most common complaint on beginner scarves. Slip the opening stitch of every row instead of knitting it, and give the yarn a gentle tug after the edge stitches. Count your stitches now and then, because accidentally adding or dropping stitches at the edges makes the scarf widen or narrow."),
        ("Fixing a dropped stitch",
         "If you spot a little ladder running down your scarf, don't panic. Stop knitting, slide a crochet hook into the loose loop, and pull each horizontal strand of the ladder through the loop, working upwards until you reach the needle. Then place the loop back on the needle and carry on."),
        ("Finishing and blocking your scarf",
         "When the scarf feels long enough, bind off loosely so the end doesn't pucker. Weave the loose tails into the back of the fabric with a blunt needle. Then soak the scarf in lukewarm water, press out the water in a towel and lay it flat to dry, gently smoothing it into shape."),
    ],
    constraint="must / must not contain numbers or measurements",
)


# ===========================================================================
# Build
# ===========================================================================

def word_count(text):
    return len(text.split())


def shuffled_corpus(topics, seed_prefix, id_prefix_key):
    """Return (corpus rows, per-query labels) for `topics`. Deterministic.

    Passages of one topic are shuffled with a RNG seeded by `seed_prefix` and the query id so
    that the id number says nothing about which side of the constraint a passage is on. Ids
    are `<topic[id_prefix_key]>-NN`; labels are (doc_id, side) with side in {"c", "r", "x"}.
    Shared with evalsets/instructions-heldout/build.py (the same data model).
    """
    corpus = []
    labels = {}
    for t in topics:
        items = ([("c", d) for d in t["changed_docs"]]
                 + [("r", d) for d in t["reversed_docs"]]
                 + [("x", d) for d in t["distractors"]])
        random.Random(seed_prefix + t["qid"]).shuffle(items)
        labels[t["qid"]] = []
        for n, (side, (title, text)) in enumerate(items, start=1):
            doc_id = "%s-%02d" % (t[id_prefix_key], n)
            corpus.append({"_id": doc_id, "title": title, "text": text})
            labels[t["qid"]].append((doc_id, side))
    return corpus, labels


def assign_ids():
    """The demo set's corpus and labels (ids named after each topic's slug)."""
    return shuffled_corpus(TOPICS, "demo-", "slug")


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_qrels(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, did, score in rows:
            f.write("%s\t%s\t%d\n" % (qid, did, score))


def write_set(folder, topics, corpus, labels, extra_fields=lambda t: {}):
    """Write an evaluation set of `topics` into `folder`: corpus.jsonl (`corpus`), queries.jsonl
    (each topic's query and instructions, then `extra_fields(topic)`) and qrels/{og,changed,
    reversed}.tsv from the passages' `labels` (see `shuffled_corpus`). Return (queries, og,
    changed, reversed) as written. Shared with evalsets/instructions-heldout/build.py.
    """
    queries, og, changed, reversed_ = [], [], [], []
    for t in topics:
        queries.append({
            "_id": t["qid"],
            "text": t["query"],
            "instruction_og": "",
            "instruction_changed": t["changed"],
            "instruction_reversed": t["reversed"],
            **extra_fields(t),
        })
        for doc_id, side in sorted(labels[t["qid"]]):
            og.append((t["qid"], doc_id, 0 if side == "x" else 1))
            changed.append((t["qid"], doc_id, 1 if side == "c" else 0))
            reversed_.append((t["qid"], doc_id, 1 if side == "r" else 0))
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    write_qrels(folder / "qrels" / "og.tsv", og)
    write_qrels(folder / "qrels" / "changed.tsv", changed)
    write_qrels(folder / "qrels" / "reversed.tsv", reversed_)
    return queries, og, changed, reversed_


README_TEMPLATE = """# Instruction-following demo set (hand-written)

A small retrieval evaluation set for showing, in the web demo and in class,
whether an embedding model **obeys instructions** such as "only material for
beginners", "exclude anything before 2020", "forum posts, not news" or "must
mention a price". It follows the InfoSearch-style three-mode layout.

## How it was built

Every query, instruction, title and passage was written by hand for this
project; nothing was copied or adapted from an existing dataset. All people,
outlets, forums and usernames in news-style or forum-style passages are
invented. The sleep passages that cite research paraphrase well-known
published findings loosely; nothing here is medical, financial or safety
advice. The files are generated deterministically from the Python data in
`build_demo.py`:

    python3 engine/demo/build_demo.py

which rewrites every file in this folder (including this README) and then
runs the consistency checks.

## Licence

Same as the project: MIT OR Apache-2.0.

## Files

    corpus.jsonl       one passage per line: {{"_id", "title", "text"}}
    queries.jsonl      one query per line: {{"_id", "text", "instruction_og" (always ""),
                       "instruction_changed", "instruction_reversed"}}
    qrels/og.tsv       relevance for the bare query
    qrels/changed.tsv  relevance for query + instruction_changed
    qrels/reversed.tsv relevance for query + instruction_reversed
    build_demo.py      the generator (source of truth)

Each qrels file has the header `query-id<TAB>corpus-id<TAB>score`; scores
are integers, 1 = relevant, 0 = judged non-relevant.

## Modes

* **og**: the bare query; `instruction_og` is the empty string.
* **changed**: query + `instruction_changed`, a constraint.
* **reversed**: query + `instruction_reversed`, the same constraint with its
  polarity flipped (beginners vs experienced, before 2020 vs 2020 or later,
  forum vs news, mentions a price vs mentions no price, ...).

## Counts

* queries: {n_queries}
* passages: {n_passages} ({n_ontopic} on-topic, {n_distractors} near-topic distractors)
* qrels lines (excluding header): og {n_og}, changed {n_changed}, reversed {n_reversed}
* relevant per mode: og {rel_og}, changed {rel_changed}, reversed {rel_reversed}

## Design rules

1. Each query has {docs_range} on-topic passages, all clearly
   relevant to the bare query, so topic alone cannot separate them.
2. Every on-topic passage satisfies exactly one polarity of its query's
   constraint (at least 3 on each side, roughly half each). In og.tsv all of
   them are 1; in changed.tsv the ones satisfying `instruction_changed` are 1
   and the rest 0; reversed.tsv is the complement. Every on-topic passage
   appears in all three files, so changed and reversed are disjoint and
   together cover og.
3. The constraint is checkable from the passage text alone: dates written in
   the text, prices written in the text, "Posted by u/... in r/..." bylines,
   datelines, numbered steps, code, named places, explicit ages or durations.
4. Constraint types vary across queries, and instructions are phrased in
   varied, natural ways rather than from a template.
5. Passages are 30 to 110 words (one deliberately long passage of about 250
   words in the coffee topic), distinct, and titled. A few odd cases are
   included on purpose: accented text (São Jorge, pastéis de nata, café,
   Doñana, Białowieża), emoji, a table-like line of numbers, a long passage,
   and inline code.
6. A few near-topic distractors (a pet python, the legend of Marathon, rust
   on cast iron) are judged 0 in all three modes.
7. Passage ids are `<topic>-<nn>`; the order within a topic is shuffled
   with a fixed seed so the number says nothing about the label.

## Queries and constraint types

| id | query | constraint type | changed / reversed |
|----|-------|-----------------|--------------------|
{table}
"""


def build():
    corpus, labels = assign_ids()
    queries, og, changed, reversed_ = write_set(HERE, TOPICS, corpus, labels)

    n_distr = sum(len(t["distractors"]) for t in TOPICS)
    per_topic = [len(t["changed_docs"]) + len(t["reversed_docs"]) for t in TOPICS]
    table = "\n".join(
        "| %s | %s | %s | %d / %d |" % (
            t["qid"], t["query"], t["constraint"],
            len(t["changed_docs"]), len(t["reversed_docs"]))
        for t in TOPICS)
    readme = README_TEMPLATE.format(
        n_queries=len(queries),
        n_passages=len(corpus),
        n_ontopic=len(corpus) - n_distr,
        n_distractors=n_distr,
        n_og=len(og), n_changed=len(changed), n_reversed=len(reversed_),
        rel_og=sum(s for _, _, s in og),
        rel_changed=sum(s for _, _, s in changed),
        rel_reversed=sum(s for _, _, s in reversed_),
        docs_range=(str(min(per_topic)) if min(per_topic) == max(per_topic)
                    else "%d to %d" % (min(per_topic), max(per_topic))),
        table=table,
    )
    with open(HERE / "README.md", "w", encoding="utf-8", newline="\n") as f:
        f.write(readme)


# ===========================================================================
# Checks
# ===========================================================================

BRANDS = ["yamaha", "fender", "martin", "d'addario", "gibson", "taylor",
          "snark", "kyser", "yousician", "ernie ball", "elixir", "youtube",
          "epiphone", "ibanez"]
NUMBER_WORDS = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"twenty|thirty|forty|fifty|hundred|thousand|first|second|third|half|"
    r"single|double|dozen|once|twice)\b", re.I)
MONEY = re.compile(r"[$€£]|\b(price|cost|costs|paid|dollars?|euros?|pounds?)\b", re.I)


def content_checks():
    """Sanity checks that the passages really satisfy their labelled side."""
    problems = []
    long_passages = 0
    seen_texts, seen_titles = set(), set()
    by_q = {t["qid"]: t for t in TOPICS}
    for t in TOPICS:
        for side in ("changed_docs", "reversed_docs", "distractors"):
            for title, text in t[side]:
                wc = word_count(text)
                if wc > 200:
                    long_passages += 1
                elif not 30 <= wc <= 110:
                    problems.append("%s %r: %d words" % (t["qid"], title, wc))
                if text in seen_texts or title in seen_titles:
                    problems.append("duplicate: %r" % title)
                seen_texts.add(text)
                seen_titles.add(title)
    if long_passages != 1:
        problems.append("expected exactly one long passage, got %d" % long_passages)

    def each(qid, side):
        return by_q[qid][side]

    # q02: numbered steps vs prose
    for title, text in each("q02", "changed_docs"):
        if not re.search(r"(Step 1|\b1[.)])", text):
            problems.append("q02 list without numbering: %r" % title)
    for title, text in each("q02", "reversed_docs"):
        if re.search(r"(Step \d|\b\d[.)] )", text):
            problems.append("q02 prose with numbering: %r" % title)
    # q03: dates
    for side, ok in (("changed_docs", lambda y: y >= 2020), ("reversed_docs", lambda y: y < 2020)):
        for title, text in each("q03", side):
            years = [int(y) for y in re.findall(r"\b(19\d\d|20\d\d)\b", title + " " + text)]
            if not years or not all(ok(y) for y in years):
                problems.append("q03 date problem: %r %s" % (title, years))
    # q04: price vs none
    for title, text in each("q04", "changed_docs"):
        if not re.search(r"[$€£]\s?\d", text):
            problems.append("q04 no price: %r" % title)
    for title, text in each("q04", "reversed_docs"):
        if MONEY.search(title + " " + text):
            problems.append("q04 mentions money: %r" % title)
    # q06: brand vs none
    for title, text in each("q06", "changed_docs"):
        if not any(b in text.lower() for b in BRANDS):
            problems.append("q06 no brand: %r" % title)
    for title, text in each("q06", "reversed_docs"):
        if any(re.search(r"\b%s\b" % re.escape(b), (title + " " + text).lower()) for b in BRANDS):
            problems.append("q06 names a brand: %r" % title)
    # q08: length
    for title, text in each("q08", "changed_docs"):
        if word_count(text) > 50:
            problems.append("q08 short passage too long: %r %d" % (title, word_count(text)))
    for title, text in each("q08", "reversed_docs"):
        if word_count(text) <= 80:
            problems.append("q08 long passage too short: %r %d" % (title, word_count(text)))
    # q09: first person vs impersonal
    fp = re.compile(r"\b(I|I'd|I'm|me|my|we|our|us)\b")
    for title, text in each("q09", "changed_docs"):
        if not fp.search(text):
            problems.append("q09 not first person: %r" % title)
    for title, text in each("q09", "reversed_docs"):
        if fp.search(text):
            problems.append("q09 first person in guide: %r" % title)
    # q11: code vs prose
    for title, text in each("q11", "changed_docs"):
        if "`" not in text:
            problems.append("q11 no code: %r" % title)
    for title, text in each("q11", "reversed_docs"):
        if re.search(r"[`{}&]|::|\bfn\b|\blet (mut )?\w+ =", text):
            problems.append("q11 code in prose: %r" % title)
    # q14: research vs anecdote
    for title, text in each("q14", "reversed_docs"):
        if re.search(r"\b(study|studies|research|trial|meta-analysis|journal)\b", text, re.I):
            problems.append("q14 anecdote cites research: %r" % title)
    # q15: White vs Black
    for title, text in each("q15", "changed_docs"):
        if "White" not in text:
            problems.append("q15 white side not stated: %r" % title)
    for title, text in each("q15", "reversed_docs"):
        if "Black" not in text:
            problems.append("q15 black side not stated: %r" % title)
    # q17: product page vs how-to
    for title, text in each("q17", "changed_docs"):
        if not re.search(r"[$€£]\d", text):
            problems.append("q17 product page without price: %r" % title)
    for title, text in each("q17", "reversed_docs"):
        if MONEY.search(text) or re.search(r"add to|buy now|in stock", text, re.I):
            problems.append("q17 how-to sells something: %r" % title)
    # q22: phone vs camera
    for title, text in each("q22", "reversed_docs"):
        if re.search(r"phone", title + " " + text, re.I):
            problems.append("q22 camera passage mentions phone: %r" % title)
    for title, text in each("q22", "changed_docs"):
        if not re.search(r"phone", text, re.I):
            problems.append("q22 phone passage without phone: %r" % title)
    # q24: numbers vs none
    for title, text in each("q24", "changed_docs"):
        if not re.search(r"\d", text):
            problems.append("q24 no numbers: %r" % title)
    for title, text in each("q24", "reversed_docs"):
        if re.search(r"\d", title + text) or NUMBER_WORDS.search(title + " " + text):
            problems.append("q24 numbers present: %r" % title)
    return problems


def read_qrels(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore", path
    out = {}
    for line in lines[1:]:
        qid, did, score = line.split("\t")
        assert score in ("0", "1"), line
        assert (qid, did) not in out, "duplicate judgment %s %s" % (qid, did)
        out[(qid, did)] = int(score)
    return out


def check():
    corpus_ids, query_ids = set(), set()
    with open(HERE / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            assert set(row) == {"_id", "title", "text"}, row
            assert all(isinstance(v, str) and v for v in row.values()), row
            assert row["_id"] not in corpus_ids, row["_id"]
            corpus_ids.add(row["_id"])
    with open(HERE / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            assert list(row) == ["_id", "text", "instruction_og",
                                 "instruction_changed", "instruction_reversed"], row
            assert row["instruction_og"] == ""
            assert row["instruction_changed"] and row["instruction_reversed"]
            assert row["_id"] not in query_ids
            query_ids.add(row["_id"])

    qrels = {m: read_qrels(HERE / "qrels" / (m + ".tsv"))
             for m in ("og", "changed", "reversed")}
    for mode, q in qrels.items():
        for qid, did in q:
            assert qid in query_ids, (mode, qid)
            assert did in corpus_ids, (mode, did)
    judged = set(qrels["og"])
    assert judged == set(qrels["changed"]) == set(qrels["reversed"]), \
        "the three qrels files must judge the same pairs"
    judged_docs = {d for _, d in judged}
    assert judged_docs == corpus_ids, "every passage must be judged"

    for qid in sorted(query_ids):
        ontopic = {d for (q, d), s in qrels["og"].items() if q == qid and s == 1}
        ch = {d for (q, d), s in qrels["changed"].items() if q == qid and s == 1}
        rv = {d for (q, d), s in qrels["reversed"].items() if q == qid and s == 1}
        assert len(ch) >= 3 and len(rv) >= 3, (qid, len(ch), len(rv))
        assert not (ch & rv), (qid, "changed and reversed overlap", ch & rv)
        assert ch | rv == ontopic, (qid, "changed + reversed must cover og")
        assert 8 <= len(ontopic) <= 12, (qid, len(ontopic))

    problems = content_checks()
    for p in problems:
        print("CONTENT PROBLEM:", p)
    assert not problems, "%d content problems" % len(problems)

    n_ontopic = sum(qrels["og"].values())
    print("queries:   %d" % len(query_ids))
    print("passages:  %d (on-topic %d, distractors %d)"
          % (len(corpus_ids), n_ontopic, len(corpus_ids) - n_ontopic))
    for mode, q in qrels.items():
        print("qrels/%-13s %d lines (+ header), %d relevant, %d non-relevant"
              % (mode + ".tsv:", len(q), sum(q.values()), len(q) - sum(q.values())))
    wcs = [word_count(t) for tp in TOPICS
           for side in ("changed_docs", "reversed_docs", "distractors")
           for _, t in tp[side]]
    print("words per passage: min %d, median %d, max %d"
          % (min(wcs), sorted(wcs)[len(wcs) // 2], max(wcs)))
    print("all checks passed")


if __name__ == "__main__":
    build()
    check()
