from topic_schema import topic

# Attribute topics (a01..a16): instructions about what KIND of document is wanted (source or
# genre, format, length, audience), never about what it says. Every passage was written by hand
# for this file; all people, outlets, products, usernames and organisations are invented.
#
# Dimensions: source/genre a01-a05, format a06-a09, length a10-a13, audience a14-a16.
# For each topic, changed_docs and reversed_docs answer the bare query equally well and differ
# only in the attribute; distractors share the query's words but answer a different question,
# one written in each attribute value where that makes sense.

import re


# ---------------------------------------------------------------------------------------------
# Programmatic label checks (each returns a list of problem strings)
# ---------------------------------------------------------------------------------------------

def _wc(text):
    return len(text.split())


def _side(t, name):
    return t["changed_docs"] if name == "changed" else t["reversed_docs"]


def length_check(short_side, long_side, short_max=30, short_min=15, long_min=90, long_max=250):
    def check(t):
        problems = []
        for title, text in _side(t, short_side):
            n = _wc(text)
            if not short_min <= n <= short_max:
                problems.append("short passage %r has %d words" % (title, n))
        for title, text in _side(t, long_side):
            n = _wc(text)
            if not long_min <= n <= long_max:
                problems.append("long passage %r has %d words" % (title, n))
        return problems
    return check


_LIST_LINE = re.compile(r"^\s*(?:[-\u2022*]\s+|\d+[.)]\s+)")


def _list_lines(text):
    return sum(1 for line in text.split("\n") if _LIST_LINE.match(line))


def list_check(list_side, prose_side, min_items=3):
    def check(t):
        problems = []
        for title, text in _side(t, list_side):
            if _list_lines(text) < min_items:
                problems.append("list passage %r has fewer than %d list items" % (title, min_items))
        for title, text in _side(t, prose_side):
            if _list_lines(text) or "\n" in text:
                problems.append("prose passage %r has list lines or line breaks" % title)
        return problems
    return check


def _lines_check(side, counts, min_lines, too_few, plain_side, marked, not_plain):
    """A check that every passage of `side` has at least `min_lines` lines for which `counts`
    holds (else the problem `too_few % (title, lines)`), and that no passage of `plain_side`
    has a line break or is `marked` (else `not_plain % title`)."""
    def check(t):
        problems = []
        for title, text in _side(t, side):
            n = sum(1 for line in text.split("\n") if counts(line))
            if n < min_lines:
                problems.append(too_few % (title, n))
        for title, text in _side(t, plain_side):
            if "\n" in text or marked(text):
                problems.append(not_plain % title)
        return problems
    return check


def faq_check(faq_side, essay_side, min_questions=2):
    return _lines_check(faq_side, lambda line: line.rstrip().endswith("?"), min_questions,
                        "FAQ passage %r has %d question lines", essay_side,
                        lambda text: re.search(r"(^|\s)(Q|A|Question|Answer)\s*[:.]", text),
                        "essay passage %r looks like Q&A")


_ROW_SEP = re.compile(r"\||;|\S {2,}\S")


def table_check(table_side, narrative_side, min_rows=4):
    return _lines_check(table_side, _ROW_SEP.search, min_rows, "table passage %r has %d rows",
                        narrative_side, lambda text: "|" in text,
                        "narrative passage %r has rows or a table marker")


_STEP_LINE = re.compile(r"^\s*(?:\d+[.)]\s|Step\s+\d+|First|Second|Third|Fourth|Fifth|Next|Then|Finally)",
                        re.IGNORECASE)


def steps_check(steps_side, overview_side, min_steps=4):
    return _lines_check(steps_side, _STEP_LINE.match, min_steps, "step passage %r has %d step lines",
                        overview_side, lambda text: re.search(r"\bStep\s+\d", text),
                        "overview passage %r has step lines")


TOPICS = [
    # =========================================================================================
    # SOURCE / GENRE
    # =========================================================================================
    topic(
        "a01", "attribute", "source: forum thread vs news report",
        "do electric cars lose range in cold weather",
        "Only show me forum threads where owners talk about it.",
        "Anything but a forum thread: news reports, please.",
        [
            ("Winter range on my hatchback dropped a lot, normal?",
             "frostbitten_volts wrote:\nFirst proper cold snap here, -12°C overnight, and my range "
             "estimate went from about 380 km to 260 km. Is the battery on its way out?\n\n"
             "kwh_kathy replied:\nNope, that's just winter. Cold cells deliver their energy less "
             "efficiently and the cabin heater is a big draw. I lose roughly a third in January and "
             "get it all back by April.\n\nfrostbitten_volts replied:\nGood to hear. Warmed it up on "
             "the charger this morning before leaving and the drop was smaller."),
            ("Heat pump vs resistance heater: my cold-weather numbers",
             "Re: Is the heat pump option worth paying for?\n\n> Does the heat pump actually make a "
             "difference in winter?\n\nFor me it did. My previous car had a plain resistive heater and "
             "I'd see 35-40% less range at around -10. The current one with a heat pump loses more "
             "like 20-25% on the same commute. Seat and steering wheel heaters help too, they use far "
             "less power than heating the whole cabin air.\n\n(reply #6 in this thread, from "
             "glacier_commuter)"),
            ("Short trips in the cold wreck my efficiency",
             "Anyone else notice it's the short hops that hurt most? My 8 km school run at -5 uses "
             "almost double the kWh per km compared to summer, because the pack and the cabin never "
             "warm up. On a long highway trip the loss settles nearer 20%.\n\n"
             "    \u21b3 sparky_in_sask: Same here. Precondition while it's plugged in and park in the "
             "garage if you can, made a real difference for me.\n\n"
             "    \u21b3 ohm_sweet_ohm: +1, and check tyre pressure, it drops in the cold and costs you "
             "a few km too."),
        ],
        [
            ("Cold snaps cut electric car range by nearly a third, drivers' group finds",
             "HELSINKI (Baltic Motor Press) - Electric cars driven at minus 10 degrees Celsius covered "
             "on average 29 percent fewer kilometres than the same models in mild weather, according "
             "to test results released on Tuesday by a Nordic motorists' association. The group said "
             "heating the cabin and the slower chemistry of a cold battery accounted for most of the "
             "loss. Models fitted with heat pumps lost noticeably less range than those using "
             "conventional resistive heaters, it added. Range returned to normal once temperatures "
             "rose."),
            ("Warm up your EV while it is still plugged in, motorists told as temperatures plunge",
             "By a staff reporter, The Prairie Ledger\n\nWith overnight lows forecast to reach -20°C "
             "this week, roadside assistance officials are urging electric vehicle owners to plan for "
             "shorter range. Owners can expect to lose between 20 and 40 percent of their usual "
             "distance in severe cold, officials said, with short trips hit hardest because the "
             "battery and cabin never fully warm up. Preheating the car while it is connected to a "
             "charger draws that energy from the grid rather than from the battery."),
            ("Telematics data from 8,000 cars puts a number on winter range loss",
             "Data published this week by a fleet-tracking company offers one of the largest "
             "real-world looks at how electric cars fare in winter. Analysing trips from about 8,000 "
             "vehicles, the firm found average usable range fell by around 20 percent at 0°C and by "
             "more than 30 percent below -15°C, compared with 20°C days. Highway driving was less "
             "affected than stop-start city trips, the report said. The company found no evidence "
             "that cold weather caused lasting battery damage.\n\nReporting by Mira Okonkwo, "
             "Eastbridge Business Daily"),
        ],
        [
            ("Does hot weather wear out EV batteries faster?",
             "Thread: Moving somewhere with brutal summers, worried about battery ageing\n\n"
             "dune_driver: Will years of 40°C summers degrade my pack faster than where I live now?\n\n"
             "volt_vet: Heat is the bigger long-term enemy, yes. Park in the shade, don't leave it "
             "sitting at 100% charge in a heatwave, and let the thermal management do the rest. Mine "
             "is at 91% health after six hot years."),
            ("City to add 40 fast chargers before winter",
             "NORTHFIELD - The city council on Monday approved 40 new public fast-charging points for "
             "electric cars, with installation due before the first snowfall. Officials said the "
             "chargers, at libraries and park-and-ride sites, would be paid for from a state "
             "infrastructure grant. Construction begins next month, and drivers will pay by card or "
             "app."),
        ],
    ),

    topic(
        "a02", "attribute", "source: blog post vs encyclopedia entry",
        "why was the Great Wall of China built",
        "No encyclopedia entries; I'd like to read a blogger's take.",
        "Stick to encyclopedia or reference entries rather than blogs.",
        [
            ("Standing on the wall at Jinshanling made me finally get why it exists",
             "I've wanted to write this one since getting back from Beijing in May. Climbing between "
             "the watchtowers at Jinshanling, my guide kept pointing north: that's where the raiders "
             "came from. For roughly two thousand years, Chinese states built and rebuilt walls to "
             "keep out horseback nomads from the steppe, like the Xiongnu and later the Mongols. The "
             "stretch I walked is Ming-era brick, put up after the Mongols humiliated a Ming army in "
             "1449. Walking it with sore legs, I was struck by how much labour went into defence. "
             "Next post: the food! Leave a comment if you've been."),
            ("History nerd rant: the Great Wall wasn't just a wall",
             "Okay, pet peeve time on the blog. People picture the Great Wall as one project to stop "
             "invasions. Defence was the main reason, sure, emperors wanted a barrier against "
             "northern nomadic armies, but it also worked as a border checkpoint. Garrisons taxed "
             "caravans on the Silk Road, controlled who moved in and out, and passed warnings along "
             "with smoke and fire from beacon towers. And it's many walls: Qin Shi Huang linked older "
             "state walls around 221 BC, and the Ming built most of what tourists see today. Rant "
             "over, thanks for reading as always. - Dev"),
            ("Why did they build it? Questions from my kids on our Great Wall day",
             "Our family blog has been quiet, but our Mutianyu trip deserves a write-up. My daughter "
             "asked the obvious question halfway up the steps: why would anyone build this? I told "
             "her what I'd read the night before. Rulers of ancient China wanted to protect farms and "
             "towns from raids by nomadic horsemen from the north, and a long wall with towers let "
             "soldiers watch the border and send signals quickly. Different dynasties kept adding to "
             "it; most of the section we walked dates from the Ming dynasty. She decided it was 'a "
             "really long fence.' Fair enough."),
        ],
        [
            ("Great Wall of China (fortification)",
             "The Great Wall of China is a series of fortifications built across the historical "
             "northern borders of Chinese states to protect against raids and invasions by nomadic "
             "groups of the Eurasian Steppe. Walls were built as early as the 7th century BC; after "
             "unifying China in 221 BC, Qin Shi Huang connected several of them. The best-preserved "
             "sections date from the Ming dynasty (1368-1644), which rebuilt the wall in brick and "
             "stone after repeated Mongol incursions. Besides defence, the wall enabled border "
             "control, the collection of duties on goods traded along the Silk Road, and "
             "communication by beacon signals."),
            ("Great Wall: Purpose and function",
             "Purpose. The primary function of the Great Wall was military: it slowed mounted raiders "
             "from the northern steppe, channelled them towards fortified passes, and gave garrisons "
             "time to respond. Secondary functions included regulating migration, imposing customs "
             "duties at gates, and transmitting alarms along chains of beacon towers using smoke by "
             "day and fire by night. See also: Ming dynasty; Xiongnu; Silk Road."),
            ("Wall building in imperial China",
             "Wall building in imperial China refers to the construction of long defensive barriers "
             "along the northern frontiers from the Warring States period to the Ming dynasty. "
             "Motivations varied by era but centred on defence against pastoral nomadic "
             "confederations such as the Xiongnu and the Mongols, whose cavalry could strike "
             "agricultural settlements quickly. Later dynasties also used walls to mark political "
             "boundaries and to control trade. The Ming undertook the most extensive programme after "
             "the Tumu Crisis of 1449."),
        ],
        [
            ("Can you actually see the Great Wall from space? I looked into it",
             "A reader emailed asking whether the Great Wall is visible from the Moon, so I went down "
             "a rabbit hole this weekend. Short version: no. The wall is long but only a few metres "
             "wide and roughly the same colour as the ground around it. Astronauts in low orbit have "
             "said it is extremely hard to pick out with the naked eye, while highways and airports "
             "are easier. Myth busted. Next week I'm tackling the sticky-rice mortar story."),
            ("Great Wall of China: Conservation",
             "Conservation of the Great Wall is complicated by its length and by erosion, vegetation "
             "growth and unregulated tourism. Surveys in the early 21st century estimated that a "
             "substantial share of the Ming-era wall had deteriorated or disappeared, with "
             "rammed-earth sections in the arid west particularly vulnerable. Protection regulations "
             "introduced in 2006 prohibit removing bricks from or building on the wall. Some "
             "restoration work has been criticised for its use of modern materials."),
        ],
    ),

    topic(
        "a03", "attribute", "source: independent review vs vendor product page",
        "good beginner telescope for seeing Saturn's rings",
        "Independent reviews, not material from the company selling the thing.",
        "I want the maker's or shop's own product page.",
        [
            ("Lumivista 130EQ review: decent planets, frustrating mount",
             "We bought the Lumivista 130EQ at full retail price; the company had no input into this "
             "review. Optically it is a solid first telescope. On our second clear night Saturn's "
             "rings were obvious at 130x and the Cassini Division showed briefly when the air "
             "steadied. The equatorial mount, however, confused two of our three novice testers and "
             "wobbles at high power. Verdict: 3.5/5. Good for seeing Saturn, but a Dobsonian is "
             "easier for absolute beginners."),
            ("Hands-on: four starter scopes tested on Saturn",
             "For this comparison our reviewer, an amateur astronomer of 15 years, spent a month with "
             "four telescopes under 400 euros, all bought anonymously. The clear winner for a "
             "first-timer who wants Saturn's rings was the Kestrel 6-inch Dobsonian: its aperture "
             "showed the rings, the ring shadow on the planet and the moon Titan, and setup was "
             "simple. The Nightjar 90 refractor also showed the rings clearly and is lighter, but its "
             "image was dimmer. We would skip anything advertised by magnification alone."),
            ("Nightjar 90 after six months: an owner's unsponsored verdict",
             "I'm not affiliated with Nightjar and paid for this myself. Six months in, I'd recommend "
             "it to a beginner with one caveat. Saturn is lovely: the rings sit distinctly apart from "
             "the planet at around 90x, and my kids gasp every time. But the included 4 mm eyepiece "
             "is poor and the tripod shakes in wind. Swap the eyepiece and it's a great first scope "
             "for planets. Four stars from me."),
        ],
        [
            ("Lumivista 130EQ Reflector Telescope",
             "Lumivista 130EQ Reflector Telescope\n$349.00 \u00b7 In stock \u00b7 Free shipping over $99\n\n"
             "Your first look at Saturn's rings starts here. The 130 mm parabolic mirror gathers "
             "enough light to show the rings, the Cassini Division on steady nights, and Jupiter's "
             "cloud belts. Includes 25 mm and 10 mm eyepieces, a 2x Barlow lens and a slow-motion "
             "equatorial mount, so beginners can track planets smoothly.\n\n[ Add to cart ]   "
             "Backed by our 2-year warranty"),
            ("Nightjar 90 Refractor | Official Store",
             "NIGHTJAR 90: the grab-and-go refractor for new stargazers.\nOur 90 mm achromatic lens "
             "delivers crisp planetary views, with Saturn's rings clearly separated from the globe at "
             "100x, plus the Moon's craters in stunning detail. Sets up in five minutes, no "
             "collimation needed.\nPrice: 279 EUR (RRP 319 EUR, save 12%)\nShips within 2 working "
             "days. Order now and get our free beginner's sky guide."),
            ("Kestrel Optics Dobsonian 150 Beginner Bundle",
             "Kestrel Optics Dobsonian 150, beginner bundle. \u00a3415, or pay in 3 interest-free "
             "instalments.\nWhy choose it? A simple push-to base means there is no complicated mount "
             "to learn. With 150 mm of aperture, Saturn's rings, its moon Titan and the colours of "
             "Jupiter's bands are yours from the back garden. The bundle includes a red-dot finder, "
             "two eyepieces and a planisphere.\nOnly 4 left: pop one in your basket today."),
        ],
        [
            ("SunSafe 80 mm Solar Filter",
             "SunSafe white-light solar filter for 80-90 mm refractor telescopes. $59.99. Observe "
             "sunspots safely with certified film that blocks 99.999% of sunlight. Not for night use "
             "or for planets. Fits most beginner telescopes with a push-on cell. Add to cart: "
             "dispatched the same day."),
            ("Review: the Astrograph C2 planetary camera",
             "We tested the Astrograph C2, a $199 camera that replaces your telescope eyepiece for "
             "photographing planets. By stacking video frames we captured Saturn's rings in sharp "
             "detail through an 8-inch telescope, though the software is clunky. It is a capable "
             "upgrade for owners who already have a tracking mount and a laptop. 4/5."),
        ],
    ),

    topic(
        "a04", "attribute", "source: official agency notice vs personal account",
        "how long does it take to renew a passport by mail",
        "I'm after the official word: a government or agency notice, not somebody's anecdote.",
        "Could you find me personal accounts from people who have been through it, rather than "
        "official notices?",
        [
            ("Notice: current processing times for mail-in passport renewals",
             "NATIONAL PASSPORT SERVICE - Public notice, updated 3 March\n\nRoutine renewals submitted "
             "by mail are currently being processed within 6 to 8 weeks of receipt. Expedited "
             "service, available for an additional fee, currently takes 2 to 3 weeks. Processing "
             "times do not include mailing time to and from the agency, which may add up to two "
             "weeks. Applicants with travel within 14 days should book an in-person appointment "
             "instead."),
            ("Renewing your passport by post: official guidance",
             "Department of Citizenship and Travel Documents\n\nHow long will it take?\nAllow up to "
             "10 weeks for a renewal application sent by post to be processed. Most applications are "
             "completed sooner; however, the Department does not guarantee earlier return and advises "
             "against booking travel until your new passport arrives. Applications with incomplete "
             "forms, or with photos that do not meet requirements, will be returned, which restarts "
             "the processing period."),
            ("Seasonal demand advisory for mail-in passport renewals",
             "Advisory No. 12, issued by the Office of Consular Affairs. Demand for passport renewals "
             "rises sharply between January and June. During this period, mail-in renewals may take "
             "up to 11 weeks; outside the peak season the standard target is 6 weeks. Expedite "
             "requests received by mail are handled in approximately 3 weeks. Applicants can track "
             "their status online using the reference number on the payment receipt."),
        ],
        [
            ("My mail-in passport renewal took exactly five weeks",
             "Sharing my timeline in case it helps someone planning a trip. I posted my renewal form, "
             "old passport and photos on 2 February. The online tracker switched to 'in process' on "
             "13 February, and the new passport landed in my letterbox on 9 March, five weeks door to "
             "door. The old one came back separately about a week later. I paid for routine service, "
             "not expedited, so I was pleasantly surprised."),
            ("Renewed by mail in peak season and nearly missed my trip",
             "Learned this one the hard way last spring. I mailed my renewal in early April thinking "
             "six weeks was plenty for a June wedding abroad. Week eight came and still nothing. I "
             "ended up calling, paying to upgrade to expedited, and the passport turned up at week "
             "ten, three days before my flight. If you're renewing between January and summer, give "
             "yourself at least three months. That's my story anyway."),
            ("We renewed the same week: expedited vs routine",
             "My husband and I renewed our passports by post at the same time but chose differently. "
             "I paid the expedited fee and had mine back in 16 days. He went routine, and his took "
             "seven and a half weeks plus a few days in the post. Same address, same week mailed. For "
             "us the extra fee was only worth it because I had a work trip coming up."),
        ],
        [
            ("Official photo requirements for passport applications",
             "Notice from the National Passport Service: photos submitted with renewal applications "
             "must be 35 mm by 45 mm, taken within the last six months, against a plain light "
             "background, with a neutral expression and no glasses. Photos that do not meet these "
             "standards are the most common reason for applications being returned to the sender."),
            ("I lost my passport on holiday, here's what happened",
             "Two days before flying home from Lisbon, my bag was stolen with my passport inside. I "
             "went to the consulate the next morning with a police report, filled in a form and got "
             "an emergency travel document the same afternoon. It was only valid for the journey "
             "home. Back home I had to apply for a replacement in person, because a lost passport "
             "can't be renewed by mail."),
        ],
    ),

    topic(
        "a05", "attribute", "source: scientific paper abstract vs popular magazine piece",
        "does learning a musical instrument improve children's memory",
        "research abstracts only",
        "I'd prefer a popular magazine article over a journal abstract.",
        [
            ("Effects of two years of instrumental training on working memory in primary school "
             "children: a randomised controlled trial",
             "Background: Cross-sectional studies link musical training with better memory, but "
             "causal evidence is limited. Methods: We randomly assigned 212 children aged 7-9 to "
             "either group instrumental lessons or an active control (visual arts) for two years. "
             "Verbal and visuospatial working memory were assessed at baseline, 12 and 24 months. "
             "Results: The music group improved more on verbal working memory (digit span; Cohen's "
             "d = 0.31, p = .02) but not on visuospatial measures. Conclusions: Instrumental "
             "training produces a modest, domain-specific benefit to verbal working memory."),
            ("Musical instrument training and memory in childhood: a systematic review and "
             "meta-analysis",
             "Objective. To estimate the effect of musical instrument training on memory in "
             "children. Data sources. Five bibliographic databases searched to 2022. Study "
             "selection. Controlled studies of children aged 4-14 receiving at least six months of "
             "instrument instruction. Results. Twenty-seven studies (n = 3,104) were included. "
             "Training was associated with a small improvement in verbal memory (g = 0.22, 95% CI "
             "0.10-0.34); effects were smaller in randomised studies and heterogeneity was high. "
             "Conclusions. The evidence suggests a small benefit, but study quality is moderate."),
            ("Piano instruction and auditory memory in 8-year-olds: longitudinal evidence",
             "This longitudinal study followed 96 children, half of whom began weekly piano lessons "
             "at age eight. After 18 months, learners outperformed non-learners on auditory sequence "
             "recall and word-list memory, controlling for IQ and socioeconomic status, whereas no "
             "group difference emerged for visual memory. Differences were larger among children "
             "who practised more than 90 minutes per week. The findings suggest that sustained "
             "instrumental practice may strengthen auditory memory processes in middle childhood."),
        ],
        [
            ("Can piano lessons really boost your child's memory?",
             "Every parent who has sat through a squeaky recorder recital has wondered whether it is "
             "doing any good. According to a growing body of research, it might be, at least a "
             "little. In one recent trial, children who spent two years in group instrument lessons "
             "got better at remembering strings of numbers and words than classmates who did art "
             "instead, says developmental psychologist Dr. Hanne Lindqvist. 'It's a real effect, but "
             "a modest one,' she cautions. 'Don't expect lessons to turn a child into a genius.'"),
            ("The memory upside of all that violin practice",
             "Here's some good news for the parents enforcing daily violin practice. When researchers "
             "pooled dozens of studies of kids learning instruments, they found a small but "
             "consistent bump in verbal memory: remembering things you hear, like spoken "
             "instructions or new vocabulary. The catch, as our science editor explains, is that the "
             "best-designed studies show the smallest effects. Bottom line? Do music for the joy of "
             "it, and count any memory boost as a bonus."),
            ("Why your kid's drum lessons might help at school",
             "It turns out there may be a reason beyond noise tolerance to support the drum kit in "
             "the garage. Studies following children who start an instrument around age eight "
             "suggest they get better at holding sounds and words in mind, the kind of auditory "
             "memory that helps with following a teacher's directions. Kids who practised more saw "
             "bigger gains. Researchers we spoke to stress that the effect is on listening memory; "
             "there is little sign that visual memory improves."),
        ],
        [
            ("Background music and reading comprehension in university students",
             "Background: Many students listen to music while studying. Methods: 140 undergraduates "
             "read passages in silence, with instrumental music, or with lyrical music, then "
             "completed comprehension and recall tests. Results: Lyrical music reduced recall by 12% "
             "relative to silence; instrumental music had no significant effect. Conclusions: Music "
             "with lyrics may impair memory for material read by adults."),
            ("Which instrument should your child learn first?",
             "Ukulele, piano or recorder? The music teachers we asked agree that the best first "
             "instrument is the one your child actually wants to play. Piano is a strong all-rounder "
             "for learning to read music; ukulele is cheap and quickly rewards small hands; violin "
             "demands patience. Rent before you buy, and expect a few months of grumbling about "
             "practice."),
        ],
    ),

    # =========================================================================================
    # FORMAT
    # =========================================================================================
    topic(
        "a06", "attribute", "format: bulleted or numbered list vs prose",
        "how to keep guacamole from turning brown",
        "Bullet points please.",
        "Write it as ordinary paragraphs, no lists.",
        [
            ("Stop guacamole browning: quick tips",
             "Keep your guac green:\n"
             "- Add plenty of lime or lemon juice; the acid slows browning.\n"
             "- Press plastic wrap directly onto the surface so no air touches it.\n"
             "- Store it in the smallest container that fits, to limit air space.\n"
             "- Refrigerate right away and eat within a day or two.\n"
             "- If the top darkens anyway, scrape off the thin brown layer; it's fine underneath."),
            ("5 tricks for green guacamole overnight",
             "1. Smooth the top flat with the back of a spoon.\n"
             "2. Pour a thin layer of cold water (about 1 cm) over it, then put the lid on.\n"
             "3. Or squeeze extra citrus over the top before covering.\n"
             "4. Keep it cold, at the back of the fridge.\n"
             "5. Pour off any water and stir well before serving."),
            ("Guacamole storage cheat sheet",
             "\u2022 The culprit is oxygen: an enzyme in avocado (polyphenol oxidase) browns the flesh "
             "when it meets air.\n"
             "\u2022 Block the air: cling film pressed onto the dip, or an airtight tub filled to the "
             "brim.\n"
             "\u2022 Add acid: lime juice lowers the pH and slows the enzyme.\n"
             "\u2022 Go cold: refrigeration slows the reaction further.\n"
             "\u2022 Note: leaving the pit in only protects the patch it touches."),
        ],
        [
            ("Why guacamole goes brown, and how to stop it",
             "Guacamole turns brown because an enzyme in the avocado reacts with oxygen in the air, "
             "the same process that darkens a cut apple. The most reliable way to prevent it is to "
             "keep air away from the surface. Press plastic wrap right down onto the dip so there are "
             "no air pockets, or pack it into a container that it fills completely. A generous "
             "squeeze of lime juice helps too, since acid slows the enzyme, and cold storage slows it "
             "further. Even then a thin brown film may appear after a day; simply scrape it away."),
            ("The water trick for leftover guacamole",
             "My favourite way to store leftover guacamole is almost too simple. I pack it firmly "
             "into a container, smooth the top, and pour about a centimetre of cold water over it "
             "before putting the lid on. The water acts as a barrier so oxygen cannot reach the "
             "avocado, and the next day I tip the water off, give the dip a stir, and it is as green "
             "as when I made it. It works for a day or two, after which the texture suffers more "
             "than the colour."),
            ("Does the avocado pit really keep guacamole green?",
             "Plenty of cooks swear by burying the pit in the bowl, but it only protects the "
             "guacamole directly underneath it, because that is the only part shielded from air. "
             "What actually keeps the dip green is limiting oxygen and adding acid. Cover the "
             "surface tightly with cling film, stir in lime or lemon juice, and refrigerate. "
             "Prepared this way, guacamole stays bright for around a day without any tricks "
             "involving the stone."),
        ],
        [
            ("How to tell if an avocado is ripe enough for guacamole",
             "* Colour: Hass avocados darken from green to near-black as they ripen.\n"
             "* Feel: a ripe one yields to gentle pressure but isn't mushy.\n"
             "* Stem check: flick off the little stem cap; green underneath means ready, brown means "
             "overripe.\n"
             "* Too firm? Leave it in a paper bag with a banana for a day or two."),
            ("Why is my guacamole watery?",
             "Watery guacamole usually comes from the tomatoes and onions rather than the avocado. "
             "Tomatoes release juice as soon as they are cut and salted, and that liquid pools at the "
             "bottom of the bowl. Seeding and draining the tomatoes before adding them helps, as does "
             "salting just before serving. Underripe avocados also make a looser, less creamy dip, "
             "so choose fruit that yields to gentle pressure."),
        ],
        checks=[list_check("changed", "reversed")],
    ),

    topic(
        "a07", "attribute", "format: essay vs Q&A/FAQ",
        "why do cats knead with their paws",
        "I'm not interested in FAQ pages; give me a proper essay.",
        "FAQ format: questions, each followed by its answer.",
        [
            ("Kneading and the kitten within",
             "Few feline behaviours are as endearing, or as puzzling, as kneading. A cat settles onto "
             "a blanket or a lap and begins pressing with alternate front paws, often purring, "
             "sometimes drooling. The most widely accepted explanation traces the habit to "
             "kittenhood: nursing kittens knead their mother's belly to stimulate the flow of milk. "
             "Adult cats appear to retain the motion as a comforting ritual, returning to it when "
             "they feel safe and content. Seen in this light, a kneading cat is less a mystery than a "
             "small animal reliving the security of its earliest weeks."),
            ("On cats, blankets, and the scent of home",
             "Why would an animal that prizes composure spend minutes rhythmically pressing a "
             "cushion? Part of the answer lies in the paws themselves. Cats have scent glands between "
             "their toe pads, and kneading deposits their odour on whatever they work, quietly "
             "marking it as theirs. There is an older layer too: wild ancestors are thought to have "
             "trampled grass and leaves to make a soft, safe place to lie down. Kneading, then, may "
             "be equal parts housekeeping, property claim and inherited instinct."),
            ("Contentment in motion: reflections on kneading",
             "Observers of domestic cats have long noticed that kneading tends to accompany "
             "relaxation. The behaviour begins in the first days of life, when kittens press against "
             "their mother to encourage milk, and it persists long after weaning. In adulthood it "
             "surfaces at moments of ease, on a warm lap or a freshly washed duvet, which suggests it "
             "functions as self-soothing. Some cats also knead when stretching after a nap, and "
             "unspayed females sometimes knead more around heat. The common thread is comfort, and "
             "owners who tolerate the occasional claw are witnessing a cat at its most trusting."),
        ],
        [
            ("Cat kneading FAQ",
             "Q: Why does my cat knead me?\nA: It's a leftover kitten behaviour. Kittens knead their "
             "mother while nursing to get the milk flowing, and adult cats keep doing it when they "
             "feel content and safe.\n\nQ: Is kneading a sign of happiness?\nA: Usually, yes. It's "
             "often paired with purring and slow blinking.\n\nQ: Why do the claws come out?\nA: "
             "Extending the claws is part of the reflex. A folded blanket on your lap helps."),
            ("Common questions about cats making biscuits",
             "Why do cats 'make biscuits' on blankets?\nMost experts link it to nursing: the pressing "
             "motion once helped milk flow, and it stays associated with comfort.\n\nDo cats knead to "
             "mark territory?\nPartly. Glands in the paw pads leave scent on whatever they knead.\n\n"
             "Is it linked to nesting?\nPossibly. Wild ancestors likely trampled vegetation to make a "
             "bed.\n\nShould I stop it?\nNo need, unless the claws hurt; trimming them helps."),
            ("Kneading: your questions answered by our vet team",
             "Question: My adult cat kneads every night. Why?\nAnswer: Kneading begins when kittens "
             "nurse and becomes a self-soothing habit for many adults, especially at bedtime.\n\n"
             "Question: Does only a happy cat knead?\nAnswer: Mostly content cats knead, though some "
             "anxious cats do it to calm themselves.\n\nQuestion: My cat drools while kneading. Is "
             "that normal?\nAnswer: Yes. Drooling is another holdover from nursing and usually means "
             "deep relaxation."),
        ],
        [
            ("Scratching furniture FAQ",
             "Q: Why does my cat scratch the sofa with its paws?\nA: Scratching sheds old claw "
             "sheaths, stretches the body and leaves visual and scent marks.\n\nQ: How do I redirect "
             "it?\nA: Put a sturdy, tall scratching post right next to the spot and reward the cat "
             "for using it.\n\nQ: Should I declaw?\nA: No; most vets advise strongly against it."),
            ("The meaning of the purr",
             "The purr is perhaps the most familiar sound a cat makes, yet its purpose is far from "
             "simple. Cats purr when content on a lap, but also when injured, frightened or giving "
             "birth, which suggests the sound is as much self-soothing as a signal of happiness. Some "
             "researchers propose that the low frequencies of purring may even aid the healing of "
             "bone and tissue. Mother cats purr to guide their blind newborn kittens towards them."),
        ],
        checks=[faq_check("reversed", "changed")],
    ),

    topic(
        "a08", "attribute", "format: table-like data vs narrative",
        "what temperature does water boil at high altitude",
        "Ideally the figures set out as a table or rows of data.",
        "Tell it as a story or an explanation in sentences, without any table.",
        [
            ("Boiling point of water by elevation (metric)",
             "Elevation (m) | Boiling point (°C)\n"
             "0 | 100.0\n"
             "500 | 98.3\n"
             "1,000 | 96.7\n"
             "1,500 | 95.0\n"
             "2,000 | 93.4\n"
             "3,000 | 90.0\n"
             "4,000 | 86.8\n"
             "5,000 | 83.6\n"
             "Rule of thumb: roughly 1 °C lower for every 300 m of climb."),
            ("Water boiling temperatures at altitude (°F)",
             "Altitude (ft)    Boils at (°F)\n"
             "sea level        212\n"
             "2,000            208\n"
             "5,000            203\n"
             "7,500            198\n"
             "10,000           194\n"
             "14,000           187\n"
             "Values calculated from standard atmospheric pressure; approx. 1 °F drop per 500 ft."),
            ("High places and the boiling point of water there",
             "Location; elevation; boiling point of water\n"
             "Denver, USA; 1,609 m; about 95 °C\n"
             "La Paz, Bolivia; 3,640 m; about 88 °C\n"
             "Lhasa, Tibet; 3,656 m; about 88 °C\n"
             "Mont Blanc summit; 4,808 m; about 84 °C\n"
             "Everest summit; 8,849 m; about 71 °C"),
        ],
        [
            ("Pasta at 3,600 metres: a lesson in physics",
             "On our third night in the Bolivian highlands, camped at about 3,600 metres, my friend "
             "Teo complained that the pasta was still crunchy after fifteen minutes at a rolling "
             "boil. Our pocket thermometer explained why: the water was boiling at just 88 degrees "
             "Celsius. Up there the air pressure is about a third lower than at the coast, so water "
             "turns to steam at a lower temperature. We learned to put a lid on, double the cooking "
             "time and stop expecting sea-level results."),
            ("Why water boils cooler up a mountain",
             "At sea level, water boils at 100 °C because that is the temperature at which its vapour "
             "pressure matches the weight of the atmosphere pressing down on it. Climb higher and "
             "there is less air above you, so the water reaches that balance sooner. The drop is "
             "roughly one degree Celsius for every 300 metres of ascent. In a city such as Denver, "
             "about a mile high, water boils near 95 °C, and on the summit of Everest it boils at "
             "around 70 °C, too cool to brew a proper cup of tea."),
            ("A baker's story about boiling at altitude",
             "When I moved my bakery from the coast to a ski town at 2,800 metres, my first batch of "
             "boiled bagels came out pale and gummy. It took me a week to realise that my pot of "
             "water was topping out at around 91 °C rather than 100. I now boil them longer and add a "
             "little more malt to the water. Customers who move up from sea level always ask why "
             "their eggs take forever, and I give them the same explanation: thinner air, cooler "
             "boil."),
        ],
        [
            ("Air pressure at altitude (standard atmosphere)",
             "Altitude (m) | Pressure (kPa) | % of sea level\n"
             "0 | 101.3 | 100\n"
             "1,000 | 89.9 | 89\n"
             "2,000 | 79.5 | 78\n"
             "3,000 | 70.1 | 69\n"
             "5,000 | 54.0 | 53\n"
             "8,000 | 35.6 | 35"),
            ("Does salt make water boil faster?",
             "A pinch of salt in a pot of pasta water does not make it boil faster. Dissolved salt "
             "actually raises the boiling temperature of water, but by such a tiny amount, a fraction "
             "of a degree at kitchen concentrations, that nobody would notice. The bubbles that "
             "appear when salt hits hot water are just dissolved gas escaping on the crystal "
             "surfaces. Cooks add salt for flavour, not for speed."),
        ],
        checks=[table_check("changed", "reversed")],
    ),

    topic(
        "a09", "attribute", "format: overview vs step-by-step instructions",
        "how to fix a toilet that keeps running",
        "Don't give me a procedure, just an overview of what usually goes wrong and how it gets "
        "fixed.",
        "Walk me through it step by step.",
        [
            ("Running toilets: an overview of the usual culprits",
             "A toilet that keeps running is almost always leaking water from the tank into the bowl "
             "or overfilling the tank. The most common cause is a worn or warped flapper, the rubber "
             "seal at the bottom of the tank, which lets water seep through so the fill valve keeps "
             "topping up. Next most likely is a float set too high, so water spills into the overflow "
             "tube. Less often the fill valve itself is failing, or the flapper chain is too short or "
             "tangled. Each of these is an inexpensive part that most homeowners can replace without "
             "calling a plumber."),
            ("What's behind that constant trickle in the toilet",
             "Plumbers say the phantom refill and the constant hiss come down to two parts inside the "
             "tank. The flush valve, sealed by the flapper, should hold water in the tank between "
             "flushes; if the flapper has hardened or mineral deposits keep it from seating, water "
             "leaks into the bowl. The fill valve refills the tank and shuts off when the float "
             "rises; if the float is adjusted too high or the valve seal is worn, water runs down the "
             "overflow tube. Replacing the flapper or the fill valve, or lowering the float, resolves "
             "the vast majority of cases."),
            ("Understanding the toilet tank: why the water won't stop",
             "Inside every gravity toilet tank is a simple cycle: the flapper lifts, water rushes "
             "into the bowl, the flapper drops and the fill valve refills the tank until the float "
             "tells it to stop. A running toilet means that cycle is broken somewhere. Coloured water "
             "creeping into the bowl betrays a leaking flapper, while water rising above the overflow "
             "tube points to the float or the fill valve. In general the cure is a part swap rather "
             "than a repair, and replacement kits cost little at hardware stores."),
        ],
        [
            ("Fix a running toilet in 6 steps",
             "1. Take the tank lid off and watch what happens after a flush.\n"
             "2. If water is flowing into the overflow tube, lower the float by turning the "
             "adjustment screw or sliding the clip down.\n"
             "3. If not, add a few drops of food colouring to the tank and wait 15 minutes without "
             "flushing.\n"
             "4. Colour in the bowl means the flapper leaks: shut off the supply valve, flush to drain "
             "the tank, unhook the old flapper and fit a new one.\n"
             "5. Adjust the chain so it has about 1 cm of slack.\n"
             "6. Turn the water back on, let the tank fill and test."),
            ("Step-by-step: swapping the flapper on a running toilet",
             "Step 1 - Turn off the water at the shut-off valve behind the toilet.\n"
             "Step 2 - Flush and hold the handle down to empty the tank.\n"
             "Step 3 - Unclip the chain from the handle arm and pop the flapper's ears off the pegs "
             "on the overflow tube.\n"
             "Step 4 - Take the old flapper to the store to match the size (usually 2 or 3 inch).\n"
             "Step 5 - Fit the new flapper and reattach the chain with slight slack.\n"
             "Step 6 - Turn the water on and listen: the constant running should stop."),
            ("Running toilet? Follow these steps",
             "First, lift the lid and check the chain: if it's caught under the flapper, free it.\n"
             "Second, check the water level. It should sit about an inch below the top of the "
             "overflow tube; if it's higher, lower the float.\n"
             "Third, if it still runs, shut off the supply and replace the flapper.\n"
             "Fourth, if the fill valve hisses nonstop after that, undo the locknut under the tank "
             "and install a new fill valve following the package diagram.\n"
             "Finally, restore the water and flush twice to confirm."),
        ],
        [
            ("How to unclog a toilet with a plunger",
             "1. Put on gloves and lay old towels around the base of the toilet.\n"
             "2. Use a flange plunger and make sure its cup is covered with water.\n"
             "3. Push down gently first to expel air, then pump firmly 10 to 15 times.\n"
             "4. Pull up sharply to break the seal and check whether the water drains.\n"
             "5. Repeat, or switch to a toilet auger if it stays blocked."),
            ("Why do toilets sweat in summer?",
             "Condensation on the outside of a toilet tank happens when cold water from the supply "
             "fills the tank and warm, humid bathroom air meets its surface. Droplets form and can "
             "drip onto the floor, where they are often mistaken for a leak. Running an exhaust fan, "
             "insulating the tank from the inside, or fitting an anti-sweat mixing valve reduces the "
             "problem."),
        ],
        checks=[steps_check("reversed", "changed")],
    ),

    # =========================================================================================
    # LENGTH
    # =========================================================================================
    topic(
        "a10", "attribute", "length: <=30 words vs >=90 words",
        "what does APR mean on a credit card",
        "Keep it short: a sentence or two at most.",
        "I want the long, detailed explanation, not a quick definition.",
        [
            ("APR in one line",
             "APR, or annual percentage rate, is the yearly interest rate your card charges on any "
             "balance you don't pay off in full by the due date."),
            ("Credit card APR, briefly",
             "On a credit card, APR is the yearly cost of borrowing shown as a percentage; divided by "
             "365 it gives the daily rate applied to unpaid balances."),
            ("Quick definition: card APR",
             "It stands for annual percentage rate: the interest charged per year on carried-over "
             "balances, cash advances or transfers. Pay the full statement each month and it never "
             "applies."),
        ],
        [
            ("Understanding your credit card's APR in depth",
             "APR stands for annual percentage rate, the yearly interest rate a card issuer charges "
             "when you borrow on the card. Most cards actually list several APRs: a purchase APR for "
             "everyday spending, a balance transfer APR, a usually higher cash advance APR, and a "
             "penalty APR that can kick in after late payments. Interest is normally calculated "
             "daily: the issuer divides the APR by 365 and applies that daily rate to your average "
             "daily balance. At 24% APR the daily rate is about 0.066%, so carrying $1,000 for a "
             "30-day cycle costs roughly $20. If you pay the full statement balance by the due date, "
             "the grace period means you pay no interest on purchases at all. Many APRs are "
             "variable, rising and falling with a benchmark rate."),
            ("What APR really costs you: a detailed guide",
             "The annual percentage rate on a credit card tells you how expensive it is to carry a "
             "balance from one month to the next. Despite the word 'annual', the charge shows up "
             "every month: the issuer works out a daily periodic rate from the APR and adds interest "
             "to each day's unpaid balance, and because that interest itself joins the balance, the "
             "effective yearly cost is slightly higher than the headline APR. Introductory offers "
             "such as 0% APR for 12 months can make large purchases or balance transfers cheaper, "
             "but the standard rate applies to whatever remains when the offer ends. Cash "
             "withdrawals typically have no grace period, so interest starts on the day you take "
             "the money out. Comparing APRs is most useful if you expect to carry a balance; if you "
             "always pay in full, rewards and fees matter more."),
            ("A closer look at APR on credit cards",
             "When a credit card agreement quotes an APR, it is describing the price of borrowing "
             "money on that card over a year, expressed as a percentage of the amount owed. Unlike a "
             "fixed loan, a card balance changes constantly, so the rate is applied day by day to "
             "whatever you owe after the statement's grace period has passed. Your APR depends "
             "largely on your credit history: applicants with strong credit are usually offered "
             "lower rates, while those with thin or damaged files pay more. Missing payments can "
             "trigger a penalty rate that lasts for months. Issuers must disclose every APR in a "
             "summary table before you open the account, which is the easiest place to compare "
             "cards."),
        ],
        [
            ("Grace period in a nutshell",
             "A grace period is the window between your statement date and due date when paying the "
             "full balance avoids interest on new purchases."),
            ("How to dispute a credit card charge",
             "If you spot a charge on your credit card statement that you did not make, or that was "
             "for goods never delivered, start by contacting the merchant, since many problems are "
             "resolved there. If that fails, contact your card issuer in writing or through its app "
             "as soon as possible; many issuers set a deadline of around 60 days from the statement "
             "date. Explain what happened and include receipts, emails or tracking details. The "
             "issuer will usually place a temporary credit on your account while it investigates and "
             "asks the merchant for its side. You do not have to pay the disputed amount during the "
             "investigation, but you should keep paying the rest of the bill on time."),
        ],
        checks=[length_check("changed", "reversed")],
    ),

    topic(
        "a11", "attribute", "length: >=90 words vs <=30 words",
        "what does git rebase do",
        "Please go into detail; a long, thorough passage would be ideal.",
        "tl;dr version only",
        [
            ("git rebase explained in detail",
             "git rebase moves a sequence of commits so that they start from a different base "
             "commit. Suppose you branched a feature off main, and main has since gained new "
             "commits. Running git rebase main while on your feature branch finds the common "
             "ancestor, temporarily sets your own commits aside as patches, moves the branch to the "
             "tip of main, and then re-applies your commits one by one. Because each re-applied "
             "commit has a different parent, it gets a new hash: rebase creates new commits rather "
             "than moving the old ones. The result is a straight, linear history with no merge "
             "commit. If a patch conflicts, git pauses so you can fix the files and run git rebase "
             "--continue, or abandon everything with git rebase --abort."),
            ("Rebase vs merge: a long-form walkthrough",
             "Both merge and rebase integrate changes from one branch into another, but they record "
             "history differently. A merge keeps both lines of development and ties them together "
             "with a merge commit, so the graph shows exactly when the branches diverged. A rebase "
             "instead rewrites your branch as if you had started it from the latest commit of the "
             "target branch: git replays your commits on top, producing new commits with new IDs, "
             "and the history reads as a single line. That makes logs easier to follow and bisect, "
             "but it changes commit identities, so the usual rule is never to rebase commits that "
             "other people have already pulled. If you must update a branch you already pushed, use "
             "git push --force-with-lease afterwards, which refuses to overwrite work you haven't "
             "seen."),
            ("Interactive rebase and history rewriting, in depth",
             "At its core, rebase takes commits from your current branch and re-applies them onto "
             "another starting point, creating fresh copies of those commits. The interactive form, "
             "git rebase -i, turns this into a general history-editing tool. Git opens a to-do list "
             "of the commits to be replayed, and you change the command beside each one: pick keeps "
             "a commit, reword edits its message, edit stops so you can amend it, squash and fixup "
             "fold it into the previous commit, and drop removes it. You can also reorder lines to "
             "reorder commits. Developers commonly use git rebase -i HEAD~5 to tidy the last five "
             "commits into a clean, reviewable series before opening a pull request. The same caution "
             "applies: rewrite only history that has not been shared."),
        ],
        [
            ("git rebase in a sentence",
             "git rebase takes the commits on your current branch and replays them on top of another "
             "commit, giving a straight, linear history."),
            ("Rebase: the short version",
             "Rebasing changes your branch's starting point: your commits are re-applied, as new "
             "commits, on top of the branch you rebase onto."),
            ("TL;DR git rebase",
             "It rewrites history by re-applying your commits onto a new base, so no merge commit is "
             "needed. Avoid it on commits others have already pulled."),
        ],
        [
            ("git fetch, briefly",
             "git fetch downloads new commits and branches from a remote repository but does not "
             "touch your working files or your current branch."),
            ("What git stash does and when to use it",
             "git stash takes the uncommitted changes in your working directory and staging area, "
             "saves them on a stack, and restores a clean working tree matching the last commit. It "
             "is handy when you need to switch branches in a hurry, pull in upstream changes, or try "
             "something without committing half-finished work. Running git stash pop re-applies the "
             "most recent stash and removes it from the stack, while git stash apply re-applies it "
             "but keeps a copy. You can keep several stashes, list them with git stash list, and "
             "give them messages with git stash push -m. Untracked files are left alone unless you "
             "add the -u option."),
        ],
        checks=[length_check("reversed", "changed")],
    ),

    topic(
        "a12", "attribute", "length: <=30 words vs >=90 words",
        "when should I plant garlic",
        "Just the quick answer, no essays.",
        "Give me a full, in-depth write-up: a long passage is what I need.",
        [
            ("Garlic planting time",
             "Plant garlic cloves in autumn, roughly two to six weeks before the ground freezes, for "
             "a harvest the following summer."),
            ("When to plant garlic: short answer",
             "Mid-autumn, usually October in cool temperate climates, so roots establish before "
             "winter; mild-winter regions can plant into early winter."),
            ("Garlic goes in in the fall",
             "Fall. Get cloves in the ground after the first light frosts but a few weeks before hard "
             "freezes; spring-planted garlic makes smaller bulbs."),
        ],
        [
            ("The complete guide to garlic planting time",
             "Garlic is best planted in autumn, and the reason is biological. The cloves need a "
             "period of cold, several weeks below about 10 °C, to trigger the plant to divide into a "
             "full bulb of separate cloves the following year. Planting four to six weeks before the "
             "soil freezes gives each clove time to grow roots, but not so much time that lots of "
             "leafy top growth is exposed to winter damage. In cold northern gardens that usually "
             "means late September or October; in milder regions, November or even December. Mulch "
             "the bed with straw after planting. Hardneck types are the most cold-hardy, while "
             "softneck types suit warmer winters. Garlic can be planted in early spring, but the "
             "bulbs are generally smaller. Expect to harvest in early to mid summer."),
            ("Timing garlic for big bulbs: a detailed look",
             "Most gardeners who struggle with small garlic bulbs have a timing problem rather than a "
             "soil problem. Garlic grows roots in autumn, sits quietly through winter, and puts on "
             "leaves in spring; the number of leaves it makes before the days lengthen in early "
             "summer largely decides bulb size, because each leaf corresponds to a wrapper layer "
             "around the bulb. Cloves planted in autumn, once soil has cooled but a few weeks before "
             "it freezes, get the longest head start. A useful sign is a soil temperature around "
             "10 °C at planting depth. Set cloves pointy end up, about 5 cm deep and 15 cm apart. If "
             "you miss autumn, pre-chill cloves in the fridge for a few weeks and plant as early in "
             "spring as the ground can be worked."),
            ("Planting garlic in warm and cold climates: the long answer",
             "The right month to plant garlic depends on where you live, but the rule behind it is "
             "the same everywhere: plant in the cool part of the year so the cloves experience "
             "winter chill before they start to form bulbs. Gardeners with hard winters plant in "
             "early to mid autumn, giving roots a few weeks to establish before the ground freezes "
             "solid. Those in places where the ground rarely freezes can wait until late autumn or "
             "early winter, and in very warm climates some growers chill cloves artificially before "
             "planting. Whatever the climate, avoid planting into warm soil in late summer, which "
             "encourages weak top growth, and avoid waterlogged beds, which rot the cloves. Harvest "
             "comes roughly eight to nine months after an autumn planting."),
        ],
        [
            ("When to harvest garlic",
             "Harvest garlic in early to mid summer, once the lower third of the leaves have turned "
             "brown but the upper leaves are still green."),
            ("Curing and storing garlic after harvest",
             "Once garlic is lifted, it needs to be cured before storage. Brush off loose soil but "
             "don't wash the bulbs, then hang them in bunches or lay them on racks somewhere dry, "
             "shaded and airy, such as a garage or covered porch. Curing takes around two to four "
             "weeks; the bulbs are ready when the outer wrappers are papery and the necks are tight "
             "and dry. Trim the roots and cut the stems about 2 cm above the bulb, or braid softneck "
             "varieties. Store cured garlic in a cool, dry place with good airflow, not in the "
             "fridge. Softneck types often keep for six to nine months, hardneck types for four to "
             "six."),
        ],
        checks=[length_check("changed", "reversed")],
    ),

    topic(
        "a13", "attribute", "length: >=90 words vs <=30 words",
        "at what age do babies start crawling",
        "Don't fob me off with a one-liner; I want a thorough passage.",
        "A brief answer is fine, one or two sentences.",
        [
            ("When babies crawl: a full guide for parents",
             "Most babies start crawling somewhere between 6 and 10 months of age, with many getting "
             "going at around 9 months, but the range of normal is wide. Crawling builds on earlier "
             "skills: holding the head up during tummy time, pushing up on straight arms, rolling, "
             "and sitting without support. Many babies first rock back and forth on their hands and "
             "knees for a few weeks before they move forward. Not every baby crawls the classic way. "
             "Some commando-crawl on their bellies, some shuffle along on their bottoms, and some "
             "move sideways like a crab. A fair number skip crawling altogether and go straight to "
             "pulling up, cruising along furniture and walking. If your baby isn't moving around at "
             "all by about a year, mention it at a check-up."),
            ("Crawling age explained, from tummy time to first moves",
             "There is no single crawling birthday. Babies usually begin between six and ten months, "
             "and the timing depends on temperament, body build and how much floor time they get. A "
             "baby who spends plenty of awake time on their tummy strengthens the neck, shoulders "
             "and core muscles that crawling needs, so offering short, frequent tummy sessions from "
             "the early weeks helps. Around six or seven months many babies can sit steadily and "
             "begin pivoting or reaching for toys just out of reach, which is often the spark for "
             "the first forward movement. Heavier babies sometimes crawl a little later, and babies "
             "born prematurely are usually judged by their corrected age. What matters more than the "
             "exact month is that the baby uses both sides of the body and keeps gaining new "
             "skills."),
            ("A closer look at the crawling milestone",
             "Parents are often surprised to learn that crawling is a less fixed milestone than "
             "sitting or walking. Typical onset is between 6 and 10 months, but studies of infant "
             "development have found that a noticeable minority of healthy babies never crawl on "
             "hands and knees at all, moving by scooting or bottom-shuffling before standing. For "
             "that reason some developmental checklists focus on whether a baby is moving "
             "independently by around nine to twelve months rather than on crawling in particular. "
             "Once a baby does crawl, progress is usually quick: within weeks they pull up on "
             "furniture. That is also the moment to fit stair gates, cover sockets and move "
             "anything small enough to swallow."),
        ],
        [
            ("Crawling age, short answer",
             "Most babies start crawling between about 6 and 10 months, often around 9 months, and "
             "some skip crawling altogether."),
            ("Babies crawl at around 6 to 10 months",
             "Typically between six and ten months. Bottom-shuffling or belly-crawling counts too, "
             "and some babies go straight to walking."),
            ("Crawling: when, in brief",
             "Expect crawling roughly in the second half of the first year, usually by 10 months, "
             "though healthy babies vary widely."),
        ],
        [
            ("First steps, quickly",
             "Most babies take their first independent steps between 9 and 15 months, with around 12 "
             "months being typical."),
            ("What to expect when your baby starts teething",
             "Teething usually begins around six months, although some babies cut their first tooth "
             "as early as three months and others not until after their first birthday. The bottom "
             "front teeth tend to appear first, followed by the top front teeth, and most children "
             "have all twenty baby teeth by about two and a half. Signs include drooling, chewing on "
             "everything, red cheeks and some fussiness, especially at night. A chilled (not frozen) "
             "teething ring or gently rubbing the gums with a clean finger can help. Teething does "
             "not cause high fevers or significant illness, so a baby with a high temperature should "
             "be checked for another cause."),
        ],
        checks=[length_check("reversed", "changed")],
    ),

    # =========================================================================================
    # AUDIENCE
    # =========================================================================================
    topic(
        "a14", "attribute", "audience: child vs expert physicist",
        "why is the sky blue",
        "Explain it the way you would to a ten-year-old.",
        "Written for physicists, please; technical terms and equations are welcome.",
        [
            ("Why is the sky blue? (for kids)",
             "Sunlight looks white, but it is really all the colours of the rainbow mixed together. "
             "When sunlight zooms into our air, it bumps into tiny, tiny bits of air that are much "
             "too small to see. Blue light gets bounced around by these bits much more than red or "
             "yellow light does. So blue light gets scattered all over the sky, and wherever you look "
             "up, some of that bouncing blue light comes into your eyes!"),
            ("The blue sky mystery: a story for young scientists",
             "Imagine sunlight as a team of colourful runners: red, orange, yellow, green, blue and "
             "violet. They all race through the air together. The blue runners are bouncy. Every "
             "time they bump into a tiny piece of air, they ping off in a new direction. The red "
             "runners mostly keep going straight. By the time the light reaches you, bouncy blue "
             "light is coming from every part of the sky, so the sky looks blue. Violet bounces too, "
             "but our eyes aren't very good at seeing it."),
            ("Kids' corner: what makes the sky blue",
             "Great question! Air is made of teeny-weeny pieces called molecules, and they are really "
             "good at throwing blue light around. When the Sun shines, the blue part of its light "
             "gets tossed all across the sky like confetti. That's why a sunny day looks blue above "
             "you. On the Moon there's no air, so there is nothing to toss the light around, and the "
             "sky there looks black even in the daytime!"),
        ],
        [
            ("Rayleigh scattering and the colour of the clear sky",
             "The blue of the clear daytime sky arises from Rayleigh scattering of sunlight by "
             "molecules (predominantly N2 and O2) whose dimensions are small compared with optical "
             "wavelengths. Treating each molecule as an induced electric dipole, the scattering "
             "cross-section scales as \u03c3 \u221d \u03b1\u00b2/\u03bb\u2074, where \u03b1 is the "
             "polarisability, so light at 450 nm is scattered roughly 4.4 times more strongly than "
             "light at 650 nm. The diffuse skylight spectrum is therefore weighted toward short "
             "wavelengths. Density fluctuations in the gas, as analysed by Smoluchowski and "
             "Einstein, provide the statistical basis for treating the scattering as incoherent."),
            ("Why skylight appears blue rather than violet: spectral and photometric considerations",
             "Skylight owes its colour to Rayleigh scattering, whose \u03bb\u207b\u2074 dependence "
             "would by itself favour violet. The perceived hue is nonetheless blue for three "
             "reasons: the solar irradiance spectrum falls off below roughly 450 nm, stratospheric "
             "ozone attenuates the shortest wavelengths, and the photopic luminosity function and "
             "cone fundamentals weight the scattered spectrum so that its chromaticity lies in the "
             "blue region, desaturated by an effectively white component. Multiple scattering and "
             "aerosol (Mie) contributions further reduce saturation near the horizon."),
            ("Molecular scattering of solar radiation: a technical note",
             "For a purely molecular atmosphere the sea-level Rayleigh optical depth is approximately "
             "\u03c4 \u2248 0.0088 \u03bb^(-4.05), with \u03bb in micrometres, giving \u03c4 "
             "\u2248 0.36 at 400 nm but only about 0.05 at 650 nm. Consequently a far larger "
             "fraction of the short-wavelength solar flux is redirected into the diffuse field, and "
             "zenith sky radiance is dominated by blue light. The slight departure from a pure "
             "\u03bb\u207b\u2074 exponent arises from the wavelength dependence of the refractive "
             "index of air and from the King correction factor for molecular anisotropy."),
        ],
        [
            ("Why are clouds white? (for kids)",
             "Clouds are made of lots of tiny water droplets. These droplets are much bigger than the "
             "little bits of air, so they bounce all the colours of sunlight about the same amount. "
             "When all the colours mix together, they make white! That's why clouds look fluffy and "
             "white, and when they get really thick, less light gets through and they turn grey."),
            ("Absorption by liquid water and the colour of the open ocean",
             "The intrinsic blue of deep, clear water is not reflected skylight but results from "
             "absorption: overtone and combination bands of the O-H stretching vibration, the "
             "strongest near 760 nm with weaker bands extending towards 600 nm, preferentially "
             "remove red light. Over path lengths of several metres the transmitted and backscattered "
             "light is depleted at long wavelengths, giving water a cyan-blue hue whose origin is "
             "vibrational rather than electronic or scattering-based."),
        ],
    ),

    topic(
        "a15", "attribute", "audience: layperson vs legal professional",
        "what is adverse possession",
        "Not written for specialists, please: plain English for someone with no legal background.",
        "Aim it at legal professionals; doctrinal terminology is expected.",
        [
            ("Adverse possession in plain English",
             "Adverse possession is a legal rule that can let someone become the owner of land they "
             "don't own, simply by using it openly as if it were theirs for a long time. Think of a "
             "neighbour who fences in a strip of your garden and treats it as their own for many "
             "years without your permission. If you never object and the time limit set by law "
             "passes, often somewhere between 10 and 20 years depending on where you live, the "
             "neighbour may be able to claim that strip legally."),
            ("Can someone take my land just by using it?",
             "Surprisingly, sometimes yes. The idea is called adverse possession. If a person uses "
             "your land as if they own it, by living on it, fencing it or farming it, openly and "
             "without your permission, and keeps doing so for a long period set by law, they can ask "
             "a court to make them the owner. The rule exists to encourage owners to keep an eye on "
             "their property and to settle long-running situations. Giving permission, or objecting "
             "in time, usually stops it."),
            ("Squatters' rights: what people mean by adverse possession",
             "When people talk about squatters' rights, they usually mean adverse possession. It is "
             "the rule that if someone openly treats a piece of land as theirs, without the owner's "
             "say-so, for a long, unbroken stretch of time, the law may eventually hand ownership to "
             "them. The length of time differs from place to place, and the person usually has to "
             "show they were using the land the whole time, not just now and then. It rarely "
             "happens by accident: owners who notice and act early keep their land."),
        ],
        [
            ("Adverse possession: elements of the claim",
             "Adverse possession is a doctrine under which a possessor acquires title to real "
             "property by operation of the statute of limitations on the true owner's action for "
             "ejectment. The claimant must establish possession that is actual, open and notorious, "
             "exclusive, hostile (under a claim of right and without the owner's permission), and "
             "continuous for the statutory period. Several jurisdictions additionally require "
             "payment of property taxes, or possession under color of title, which may shorten the "
             "period. Tacking of successive possessions is permitted where privity of estate exists "
             "between the possessors."),
            ("The hostility element and the state-of-mind debate in adverse possession",
             "Adverse possession vests title in a disseisor whose possession satisfies the statutory "
             "elements throughout the limitations period, extinguishing the record owner's estate. "
             "Courts divide on the hostility element. The majority objective standard disregards the "
             "possessor's subjective intent, asking only whether possession was without the owner's "
             "consent; a minority of jurisdictions require a good-faith belief in ownership, while "
             "older authority in a few states demanded conscious intent to dispossess. Boundary "
             "encroachment cases frequently turn on which standard applies, and permissive use at "
             "inception defeats the claim absent a clear subsequent repudiation communicated to the "
             "owner."),
            ("Adverse possession of registered land: statutory modification",
             "At common law, adverse possession operates negatively: expiry of the limitation period "
             "bars the paper owner's recovery action and extinguishes title in favour of the "
             "possessor. Registered-title regimes frequently displace that model. Under a typical "
             "statutory scheme, a squatter in adverse possession for the prescribed period does not "
             "automatically acquire title but may apply to be registered as proprietor; the "
             "registrar serves notice on the registered proprietor, whose objection will defeat the "
             "application unless the applicant brings himself within narrow exceptions such as "
             "estoppel or reasonable mistake as to the boundary."),
        ],
        [
            ("What is an easement?",
             "An easement is a right to use part of someone else's land for a particular purpose "
             "without owning it. A common example is a shared driveway, or a right for the water "
             "company to run pipes under your garden. Easements usually stay with the property when "
             "it is sold, so the new owner has to respect them too."),
            ("Quiet title actions: procedural overview",
             "A quiet title action is a proceeding to adjudicate competing claims to real property "
             "and remove clouds on title. The plaintiff must join all persons with a potential "
             "adverse interest, and service by publication may be authorised for unknown claimants. "
             "The action is frequently the vehicle by which a claimant relying on adverse possession "
             "obtains marketable record title, although pleading standards and the burden of proof "
             "are governed by local statute."),
        ],
    ),

    topic(
        "a16", "attribute", "audience: trained musician vs beginner",
        "what is the circle of fifths",
        "I'm a conservatory student, so material written for trained musicians suits me.",
        "Keep it beginner-friendly, with no music-theory jargon.",
        [
            ("The circle of fifths: structure and tonal implications",
             "The circle of fifths arranges the twelve pitch classes by successive perfect fifths "
             "(seven semitones clockwise), closing after twelve steps under equal temperament since "
             "12 \u00d7 7 \u2261 0 (mod 12). Adjacent keys differ by a single accidental in their "
             "key signatures, making the circle a model of diatonic proximity: modulation to the "
             "dominant or subdominant alters just one pitch of the collection. Enharmonic "
             "equivalence at F\u266f/G\u266d closes the cycle; in Pythagorean tuning it fails to "
             "close by the Pythagorean comma of roughly 23.5 cents."),
            ("Fifth relations and root motion in common-practice harmony",
             "The circle of fifths, the cyclic ordering of keys and pitch classes by perfect fifth, "
             "also models root motion in common-practice harmony. Descending-fifth sequences such as "
             "iii-vi-ii-V-I exploit the strongest root progression, and secondary dominants "
             "tonicise scale degrees through their own fifth relation. Each position on the circle "
             "represents a major key and its relative minor, which shares the signature of the "
             "major a minor third above. Jazz practice extends the model with tritone substitution, "
             "the substitute dominant lying diametrically opposite on the circle."),
            ("Key-signature ordering and the cycle of fifths: a reference for theory students",
             "The cycle of fifths generates the order of sharps, F-C-G-D-A-E-B, and by retrograde "
             "the order of flats, B-E-A-D-G-C-F. Each clockwise step from C major adds one sharp, "
             "the new sharp being the leading tone of the new tonic; each counter-clockwise step "
             "adds a flat, the new flat being the subdominant of the new key. Keys of six "
             "accidentals are enharmonic, and keys of seven sharps or flats overlap enharmonically "
             "with keys of five flats or sharps, which is why the notated circle is often drawn with "
             "three overlapping positions at the bottom."),
        ],
        [
            ("The circle of fifths for total beginners",
             "Picture a clock face with a musical key at each hour. C sits at 12 o'clock. Each step "
             "clockwise moves to a key five notes higher, G, then D, then A, and each of those keys "
             "uses one more black key on the piano. Going the other way round brings in flat notes "
             "instead. It's a handy map: keys that sit next to each other on the circle sound good "
             "together, which helps when you're working out chords for a song."),
            ("What's that wheel of letters? The circle of fifths, simply",
             "If you've seen a wheel with letters like C, G, D and F around it in a music book, "
             "that's the circle of fifths. It puts all twelve keys in a ring so you can see how they "
             "are related. Neighbours on the wheel share most of their notes, so songs often move "
             "between them. Beginners mostly use it to remember how many sharps or flats each key "
             "has, and to guess which chords will sound right together."),
            ("Circle of fifths: a friendly intro for new guitar players",
             "Don't let the name scare you. The circle of fifths is just a diagram that lines up the "
             "twelve musical keys in a loop. Move one step around and you land on a key that's "
             "closely related to where you started. Guitarists use it to find chords that go "
             "together: in the key of G, for instance, the chords next to G on the circle, C and D, "
             "are the ones you'll hear in countless songs."),
        ],
        [
            ("Parallel fifths in four-part voice leading",
             "In common-practice voice leading, parallel perfect fifths between any two voices are "
             "prohibited because they undermine the independence of the parts, the two voices "
             "fusing perceptually into a single line. Hidden or direct fifths, approached by similar "
             "motion, are restricted in the outer voices unless the soprano moves by step. Contrary "
             "fifths (a fifth followed by a twelfth) are tolerated by some theorists, chiefly at "
             "cadences."),
            ("What is a power chord?",
             "A power chord is just two notes: the root and the note five steps up, called the fifth. "
             "Guitarists love them because they sound big through distortion and are easy to slide "
             "around the neck. They're neither happy-sounding nor sad-sounding, which is why they fit "
             "almost any rock song."),
        ],
    ),
]
