from topic_schema import topic

# Content-family topics: the instruction constrains WHAT THE DOCUMENT SAYS (a time span, a
# place, a study type, a population, an excluded subtopic, a method, a condition, a stance,
# a named-entity class). Every passage, person, outlet and institution here is invented and
# hand-written for this set; real places and well-known historical events are only named.

import re


# ---------------------------------------------------------------------------------------------
# Small helpers for programmatic label checks.


def _docs(t, side):
    return [(title, title + " " + text) for title, text in t[side]]


def years_check(changed_ok, reversed_ok, label):
    """Every 4-digit year in changed_docs satisfies changed_ok, in reversed_docs reversed_ok."""
    pat = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")

    def check(t):
        problems = []
        for side, ok in (("changed_docs", changed_ok), ("reversed_docs", reversed_ok)):
            for title, body in _docs(t, side):
                years = [int(y) for y in pat.findall(body)]
                if not years:
                    problems.append("%s %r: no year written out (%s)" % (side, title, label))
                for y in years:
                    if not ok(y):
                        problems.append("%s %r: year %d on wrong side (%s)" % (side, title, y, label))
        return problems

    return check


def terms_check(changed_need, changed_ban, reversed_need, reversed_ban):
    """Regexes (case-insensitive): each side must match its `need` and must not match its `ban`."""

    def check(t):
        problems = []
        for side, need, ban in (("changed_docs", changed_need, changed_ban),
                                ("reversed_docs", reversed_need, reversed_ban)):
            for title, body in _docs(t, side):
                if need and not re.search(need, body, re.I):
                    problems.append("%s %r: lacks /%s/" % (side, title, need))
                if ban:
                    m = re.search(ban, body, re.I)
                    if m:
                        problems.append("%s %r: contains %r" % (side, title, m.group(0)))
        return problems

    return check


def length_check(t):
    """The brief asks for 30-200 words a passage (build.py itself allows 15-260)."""
    problems = []
    for side in ("changed_docs", "reversed_docs", "distractors"):
        for title, text in t[side]:
            n = len(text.split())
            if not 30 <= n <= 200:
                problems.append("%s %r: %d words" % (side, title, n))
    return problems


# ---------------------------------------------------------------------------------------------

TOPICS = [
    # -----------------------------------------------------------------------------------------
    topic(
        "c01", "content", "population: children vs adults",
        "does melatonin help people fall asleep faster",
        "Only evidence about children and adolescents is wanted; a passage about melatonin use "
        "in grown-ups does not count.",
        "Limit this to adults. Passages whose subjects are children or teenagers should be "
        "treated as not relevant.",
        changed_docs=[
            ("Melatonin for sleep-onset insomnia in children with ADHD: a randomised crossover trial",
             "Background: Difficulty falling asleep is common in children with attention-deficit/"
             "hyperactivity disorder. Methods: Seventy-four children aged 6 to 12 years with chronic "
             "sleep-onset insomnia took 3 mg melatonin or placebo for four weeks each, in random "
             "order, with a one-week washout. Sleep was measured by wrist actigraphy and diaries. "
             "Results: On melatonin, sleep onset came on average 27 minutes earlier than on placebo "
             "and total sleep time rose by 19 minutes. Headache and morning drowsiness were reported "
             "at similar rates in both periods. Conclusion: Short-term melatonin shortens sleep "
             "latency in this paediatric group; behavioural sleep measures should still come first."),
            ("Re: melatonin for a 9-year-old who can't switch off?",
             "Our paediatrician suggested 1 mg of melatonin for our son, who was lying awake for well "
             "over an hour most nights. Honestly it helped within the first week. He's now usually "
             "asleep twenty to thirty minutes after lights out. The doctor was clear that it only "
             "works properly alongside a fixed bedtime and no tablet in the last hour, and that we "
             "should stop it over the summer holidays to see whether he still needs it. He didn't, "
             "as it turned out. I'd talk to your GP before buying anything, since doses for kids "
             "are much smaller than what's sold online."),
            ("Teenagers, body clocks and melatonin",
             "During puberty the body clock shifts later, which is why many teenagers cannot fall "
             "asleep before midnight however tired they are. In adolescents diagnosed with delayed "
             "sleep phase, a small dose of melatonin taken four to five hours before the usual "
             "sleep time can move sleep onset earlier by roughly 30 to 60 minutes, according to "
             "several clinic-based trials. It is not a sleeping pill: taken at bedtime it does much "
             "less. Bright light soon after waking and a consistent wake-up time on weekends make "
             "the effect larger. Your young person's doctor can advise on dose and timing."),
            ("Children's hospital audit finds melatonin helps most young patients settle",
             "A sleep service at a regional children's hospital has reviewed two years of records "
             "for 312 young patients prescribed melatonin, most of them autistic or with other "
             "neurodevelopmental conditions. Parents reported that 71 per cent fell asleep at least "
             "half an hour sooner within a month. Clinicians who led the audit said the benefit "
             "was clearest in kids whose main problem was getting to sleep rather than waking in the "
             "night, and warned that the figures come from parent reports rather than a controlled "
             "comparison."),
        ],
        reversed_docs=[
            ("Exogenous melatonin for primary sleep disorders in adults: a meta-analysis",
             "We pooled 19 placebo-controlled trials enrolling 1,683 adults with primary insomnia or "
             "delayed sleep phase. Melatonin reduced sleep-onset latency by a mean of 7.1 minutes "
             "(95% CI 4.8 to 9.4) and increased total sleep time by 8.3 minutes. Effects were larger "
             "in trials using higher doses or longer treatment and in participants with delayed "
             "sleep phase. Adverse events did not differ from placebo. Melatonin produces a modest "
             "but consistent improvement in falling asleep in adults; the clinical importance of a "
             "seven-minute gain is debatable."),
            ("Prolonged-release melatonin helps older insomniacs, study finds",
             "Adults over 55 who took a prolonged-release melatonin tablet two hours before bed fell "
             "asleep faster and rated their sleep as better than those given a dummy pill, "
             "according to a three-week study of 354 participants. The treated group gained an "
             "average of 9 minutes in sleep latency. Researchers said older adults produce less "
             "melatonin at night, which may explain why they respond better than younger people. "
             "No withdrawal or next-day grogginess was recorded."),
            ("Melatonin for grown-ups: what to realistically expect",
             "If you are an adult hoping melatonin will knock you out like a sleeping pill, you will "
             "probably be disappointed. In most studies of adults with ordinary insomnia it brings "
             "sleep forward by only five to ten minutes. Where it shines is timing: shift workers "
             "and travellers crossing several time zones eastward fall asleep noticeably faster at "
             "their new bedtime when they take 0.5 to 3 mg at that time for a few days. More is not "
             "better, and high doses tend to cause morning grogginess."),
        ],
        distractors=[
            ("How the pineal gland makes melatonin",
             "Melatonin is synthesised in the pineal gland from the amino acid tryptophan, via "
             "serotonin. Its production is controlled by the suprachiasmatic nucleus, which "
             "receives signals from light-sensitive cells in the retina. Darkness switches "
             "production on and bright light, especially blue wavelengths, switches it off, so "
             "blood levels rise in the evening and peak in the small hours. The hormone also acts "
             "on receptors in blood vessels and the immune system."),
            ("Melatonin gummies drive surge in supplement sales",
             "Sales of melatonin products in pharmacies and supermarkets rose by more than a third "
             "last year, led by flavoured gummies and sprays, according to a retail analytics firm. "
             "The growth has prompted calls for clearer labelling after a consumer group tested "
             "twenty products and found the actual melatonin content ranged from half to almost "
             "three times the amount stated on the packet."),
        ],
        checks=[terms_check(
            r"\b(child\w*|kids?|paediatric\w*|pediatric\w*|adolescen\w*|teen\w*|young patients)\b",
            r"\badults?\b|\bgrown-ups?\b",
            r"\badults?\b|\bgrown-ups?\b|over 55",
            r"\b(child\w*|kids?|paediatric\w*|pediatric\w*|adolescen\w*|teen\w*)\b"),
            length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c02", "content", "place: Asia vs Europe",
        "how is glacier melt affecting downstream water supply",
        "A relevant document concerns glaciers in Asia, for example in the Himalaya, Karakoram, "
        "Tien Shan or Pamirs. Documents about European glaciers are not relevant.",
        "Are there any documents on European glaciers, such as those in the Alps, Scandinavia or "
        "Iceland? Material about Asian glaciers should be ignored.",
        changed_docs=[
            ("Meltwater and the Indus irrigation system",
             "Snow and glacier melt from the Karakoram and western Himalaya supplies a large share "
             "of summer flow in the upper Indus, which feeds the canal network irrigating much of "
             "Pakistan's farmland. Glacier mass in the Karakoram has so far been unusually stable, "
             "but basins further east are losing ice. Hydrologists expect meltwater to keep rising "
             "until the middle of the century and then decline, leaving the late-summer season, "
             "when canal demand is highest, more exposed to drought years."),
            ("Tien Shan farmers watch their rivers change",
             "In the foothills of the Tien Shan in Kyrgyzstan, villagers who divert glacier-fed "
             "streams onto apple orchards and potato fields say the water now arrives earlier in "
             "spring and runs thin by August. Regional water officials estimate the range has lost "
             "about a quarter of its glacier area in half a century. Downstream, the same rivers "
             "feed cotton farms in Uzbekistan and Kazakhstan, and ministers from Central Asian "
             "states have begun discussing how to share a shrinking late-summer supply."),
            ("Projected peak water in three Himalayan river basins",
             "We combine a glacier evolution model with a hydrological model for the upper Ganges, "
             "Brahmaputra and Koshi basins in Nepal, India and Tibet. Under a mid-range emissions "
             "pathway, glacier melt contribution peaks between 2040 and 2060 and declines by 15 to "
             "30 per cent by 2100. Annual flow changes little because monsoon rain dominates, but "
             "pre-monsoon flow, which sustains drinking water and hydropower in the dry months, "
             "falls by up to a fifth in the most glacierised sub-catchments."),
        ],
        reversed_docs=[
            ("Alpine hydropower and the vanishing glaciers of Valais",
             "Around two thirds of Switzerland's electricity comes from hydropower, and many of the "
             "reservoirs in the canton of Valais are filled each summer by glacier melt. Engineers "
             "say the Alps are now past peak water in most of these catchments: the Rhône above Lake "
             "Geneva carries less ice melt in August than it did two decades ago. Utilities are "
             "studying new dams in recently deglaciated valleys to store spring snowmelt for later "
             "in the year."),
            ("Why the Po ran low: the glacier factor",
             "Northern Italy's worst recent drought exposed how much the Po depends on ice. In a "
             "normal hot summer, melt from Alpine glaciers in Valle d'Aosta and Lombardy props up "
             "flow when rain is scarce. With glaciers much reduced and a thin winter snowpack, that "
             "buffer largely disappeared, seawater pushed tens of kilometres upstream, and "
             "irrigation for rice paddies in Piedmont was rationed."),
            ("Glacier-fed rivers in Norway and Iceland: a regional assessment",
             "This assessment for the Nordic environment council reviews runoff records from 46 "
             "glacier-fed rivers in Norway and Iceland. Most show higher summer discharge since the "
             "1990s as ice loss accelerated, which has benefited hydropower producers. Smaller "
             "glaciers in southern Norway are already shrinking fast enough that their "
             "contribution is falling; larger Icelandic ice caps are expected to keep supplying "
             "extra melt for several more decades."),
        ],
        distractors=[
            ("Melting Alpine ice gives up ancient finds",
             "As glaciers retreat, archaeologists in the Alps are recovering objects frozen for "
             "thousands of years: leather shoes, arrows, a wooden bowl and the remains of a mule "
             "train. Teams now patrol high passes each late summer because items exposed to air "
             "decay within a season or two."),
            ("How glaciers form and flow",
             "A glacier forms where more snow falls in winter than melts in summer. Over years the "
             "snow is compressed into firn and then dense ice, which begins to deform under its own "
             "weight and flow downhill. The upper accumulation zone gains mass and the lower "
             "ablation zone loses it; when losses exceed gains, the glacier thins and its front "
             "retreats."),
        ],
        checks=[terms_check(
            r"Himalaya|Karakoram|Tien Shan|Pamir|Indus|Ganges|Brahmaputra|Nepal|Pakistan|"
            r"Kyrgyzstan|Tibet|\bAsia",
            r"\bAlp(s|ine)\b|Europe|Switzerland|Swiss|Italy|Norway|Iceland|Rh[oô]ne|Nordic",
            r"\bAlp(s|ine)\b|Switzerland|Italy|Norway|Iceland",
            r"Himalaya|Karakoram|Tien Shan|Pamir|Indus|Ganges|Nepal|Pakistan|Tibet|\bAsia"),
            length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c03", "content", "time: increases from 2015 on vs before 2015",
        "what happens to employment when the minimum wage goes up",
        "I'm interested in what the evidence says about minimum wage increases that took effect "
        "in 2015 or later; research on earlier increases does not meet my need.",
        "Exclude any minimum wage increase enacted in 2015 or after. Relevant documents examine "
        "increases from before 2015.",
        changed_docs=[
            ("Germany's statutory minimum wage: employment effects after introduction",
             "Germany introduced a national minimum wage of 8.50 euros an hour in January 2015. "
             "Using administrative records up to 2018, we find no detectable fall in total "
             "employment. Marginal part-time 'mini-jobs' fell by around 180,000, but roughly half "
             "of these were converted into regular jobs with social insurance. Hourly pay at the "
             "bottom of the distribution rose markedly, while contracted hours fell slightly, so "
             "monthly earnings gains were smaller than hourly gains."),
            ("Five years of the National Living Wage: what happened to jobs?",
             "When the UK's National Living Wage for over-25s was launched in April 2016, some "
             "forecasters warned of tens of thousands of lost jobs. The independent pay commission's "
             "review in 2021 found little sign of that. Employment among low-paid groups kept "
             "rising until the pandemic, and the share of workers on the wage floor grew without a "
             "matching rise in unemployment. Some employers responded by cutting paid breaks or "
             "overtime premiums instead."),
            ("Spain's 22% jump: early evidence is mixed",
             "Spain raised its minimum wage by 22 per cent in 2019, to 900 euros a month over 14 "
             "payments, one of the largest single increases in Europe. A central bank study "
             "estimated that the rise cost between 0.6 and 1.2 per cent of employment among "
             "affected workers, concentrated among young and older employees. Other analyses using "
             "social-security data for 2019 and 2020 found smaller or insignificant effects, and "
             "the debate continues."),
            ("Re: did the $15 minimum wage kill restaurant jobs in our city?",
             "I run a small diner and watched this closely when our city phased in $15 between "
             "2015 and 2021. Restaurant employment here actually grew most of those years, though "
             "several places I know cut shifts and staff hours rather than people. Prices went up "
             "on menus everywhere. A university study from 2017 said hours for the lowest-paid "
             "workers dropped a bit, so take-home pay didn't rise as much as the headline suggested."),
        ],
        reversed_docs=[
            ("Fast-food employment after a state minimum wage rise",
             "In April 1992 New Jersey raised its minimum wage from $4.25 to $5.05 an hour while "
             "neighbouring eastern Pennsylvania stayed at $4.25. A study published in 1994 surveyed "
             "around 400 fast-food restaurants in both areas before and after the change. It found "
             "no fall in employment in New Jersey relative to Pennsylvania; if anything, jobs grew "
             "slightly faster. The result challenged the textbook prediction and prompted years of "
             "argument over data quality."),
            ("The UK minimum wage at ten: a look back",
             "Britain's first national minimum wage came into force in April 1999 at 3.60 pounds an "
             "hour. Critics predicted heavy job losses in care homes, hospitality and retail. A "
             "decade of research commissioned by the pay body found that employment in low-paying "
             "sectors held up; firms absorbed costs through lower profits, modest price rises and "
             "higher productivity. Care homes, where wage bills were a large share of costs, showed "
             "small reductions in hours."),
            ("Teen jobs and the 2007-2009 federal increases",
             "The US federal minimum rose in three steps, from $5.15 to $7.25, between July 2007 "
             "and July 2009, overlapping with the deep recession. Studies comparing states that were "
             "bound by the federal increases with states that already had higher minimums found "
             "larger declines in teenage employment in the bound states, with estimates of job "
             "losses in the low hundreds of thousands. Critics argue the recession makes it hard to "
             "isolate the wage effect."),
        ],
        distractors=[
            ("Who sets the minimum wage?",
             "In many countries the minimum wage is recommended each year by an independent "
             "commission of employer representatives, trade unionists and economists, and then "
             "approved by the government. Others set it directly by law or index it to inflation or "
             "average earnings. Some have different rates for apprentices or younger workers."),
            ("Minimum wage versus living wage: what's the difference?",
             "A minimum wage is a legal floor that employers must pay. A living wage is usually a "
             "voluntary rate calculated from the cost of a basic standard of living, including rent, "
             "food and transport, and it is often higher. Accredited employers commit to paying it "
             "to all staff, including contractors such as cleaners."),
        ],
        checks=[years_check(lambda y: y >= 2015, lambda y: y < 2015, "2015 or later vs before 2015"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c04", "content", "time: before 1900 vs 1900 or later",
        "how did cholera outbreaks lead to improvements in city water and sanitation",
        "Keep to the nineteenth century: both the outbreak and the resulting reforms must date "
        "from before 1900.",
        "Not relevant if the outbreak described took place before 1900. What I need is an "
        "outbreak in 1900 or later and the water or sanitation changes that followed it.",
        changed_docs=[
            ("Cholera and the making of London's sewers",
             "London suffered repeated cholera epidemics in the mid-nineteenth century. During the "
             "1854 outbreak in Soho, a local physician mapped deaths clustered around a single "
             "public water pump, evidence that the disease spread through contaminated water rather "
             "than foul air. Official opinion changed slowly, but after the 'Great Stink' of 1858 "
             "Parliament funded an intercepting sewer system that carried waste downstream of the "
             "city, largely complete by 1875. Later outbreaks were far smaller."),
            ("Hamburg 1892: the epidemic that forced filtration",
             "In the late summer of 1892 cholera killed about 8,600 people in Hamburg, which drew "
             "unfiltered water straight from the Elbe. Neighbouring Altona, which filtered its "
             "water through sand, had few cases even along the shared border streets. The contrast "
             "became a textbook argument for water treatment, and the city opened its own slow sand "
             "filtration works in 1893."),
            ("Croton water and the fear of cholera in early New York",
             "The cholera epidemic of 1832 killed some 3,500 New Yorkers and convinced many that "
             "the city's wells and polluted ponds could no longer serve a growing population. Voters "
             "approved a plan to bring clean water by aqueduct from the Croton River, about 40 miles "
             "to the north, and the system opened in 1842. When cholera returned in 1866, a newly "
             "created health board also cleaned streets and inspected tenements, and deaths were "
             "far fewer than in earlier waves."),
        ],
        reversed_docs=[
            ("The 1991 Latin American cholera epidemic and the chlorination push",
             "Cholera reappeared in Peru in January 1991 after nearly a century's absence and "
             "spread to most of Latin America within two years, causing over a million cases. "
             "Investigations blamed unchlorinated municipal supplies and leaking pipes in coastal "
             "cities. Lima and other cities expanded chlorination and household water disinfection "
             "campaigns, and regional banks financed sewer extensions into poor districts through "
             "the rest of the decade."),
            ("After the 2010 epidemic: rebuilding Haiti's water systems",
             "Cholera was introduced to Haiti in October 2010 and became one of the largest "
             "epidemics of modern times. The response moved from emergency treatment centres to "
             "long-term infrastructure: a national elimination plan launched in 2013 financed piped "
             "water and latrines in the worst-hit communes, and chlorine dispensers at public "
             "water points. Coverage remains incomplete, but reported cases fell sharply by 2019."),
            ("Harare's cholera crisis and what changed afterwards",
             "The outbreak that began in August 2008 in Zimbabwe's capital, eventually causing "
             "more than 98,000 cases, was traced to a water treatment works that had run out of "
             "chemicals and to burst sewers flowing into streets. In the years that followed, "
             "donors and the city council rehabilitated pumping stations, repaired trunk sewers "
             "and drilled boreholes in high-density suburbs, though further outbreaks in 2018 "
             "showed how fragile the gains were."),
            ("Lusaka's 2017-2018 outbreak: a clean-up by force",
             "When cholera spread through Lusaka's crowded settlements late in 2017, Zambia's "
             "government took unusual steps: soldiers cleared street markets and drains, public "
             "gatherings were restricted, and shallow wells near pit latrines were closed. Water "
             "utility crews added chlorinated kiosks and extended mains into unplanned areas, and a "
             "mass vaccination campaign ran from January 2018."),
        ],
        distractors=[
            ("How oral cholera vaccines work",
             "Oral cholera vaccines contain killed bacteria, sometimes with a component of the "
             "cholera toxin, and are given in two doses. They train the gut's immune system to "
             "block the bacteria before they can multiply. Protection lasts a few years and is "
             "lower in young children."),
            ("Vibrio cholerae: a waterborne bacterium",
             "Vibrio cholerae is a comma-shaped bacterium that lives naturally in brackish water and "
             "estuaries, often attached to plankton. Only some strains produce the toxin that causes "
             "the severe watery diarrhoea of cholera. Infection follows swallowing contaminated "
             "water or food, and treatment is mainly rapid rehydration."),
        ],
        checks=[years_check(lambda y: y < 1900, lambda y: y >= 1900, "before 1900 vs 1900 or later"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c05", "content", "named entity: specific laptop model/brand vs generic",
        "tips to make a laptop battery last longer",
        "The user owns a particular machine, so a relevant passage must give advice tied to a "
        "specific, named laptop model or a manufacturer's own software. Generic tips that would "
        "apply to any laptop are not relevant.",
        "Brand-neutral advice only, please; drop anything written for one particular manufacturer "
        "or model.",
        changed_docs=[
            ("Korvix Aero 14: getting the most runtime from your battery",
             "Open Korvix Power Center and select the Quiet profile, which caps the processor at "
             "15 W and lowers the fan curve. Under Battery Health, turn on Charge Guard to stop "
             "charging at 80 per cent when you mostly work plugged in. The Aero 14's OLED panel "
             "uses less power with dark themes, so enabling the system dark mode saves a noticeable "
             "amount. Finally, set the display to 60 Hz on battery; the 120 Hz mode costs about an "
             "hour of runtime on this model."),
            ("Re: Lumetra Book Pro 16 battery dies in four hours?",
             "Had the same thing on my Book Pro 16. The culprit was the discrete graphics chip "
             "staying awake. In Lumetra Control, go to Graphics and change 'Switching' from "
             "Performance to Automatic, then check which apps are pinned to the dedicated GPU, "
             "because the browser was on mine. Also update the firmware: the March update fixed a "
             "bug where the keyboard backlight never fully switched off. I now get eight to nine "
             "hours of web and email."),
            ("Tested: how far can the Hallow ThinBook X2 go on a charge?",
             "Out of the box, the ThinBook X2 lasted 7 hours 10 minutes in our looping video test. "
             "Switching Hallow's bundled Energy Manager from Balanced to Eco, which limits "
             "background boost clocks and dims the panel to 150 nits, pushed that to 9 hours 40 "
             "minutes. Disabling the always-on fingerprint wake added another twenty minutes. "
             "Hallow also offers a 'Desk mode' that holds the charge at 60 per cent, useful if the "
             "machine spends most days docked."),
        ],
        reversed_docs=[
            ("Ten ways to stretch your laptop's battery life",
             "Turn screen brightness down: the display is usually the biggest single drain. Use your "
             "operating system's battery-saver mode, which limits background activity. Close apps "
             "and browser tabs you are not using, especially video sites. Switch off Bluetooth and "
             "keyboard backlighting when you don't need them. Unplug accessories such as external "
             "drives. Keep the machine cool and off soft surfaces. And check which programs start "
             "automatically at login; trimming that list helps both speed and battery."),
            ("Lithium-ion batteries in portable computers",
             "Lithium-ion cells age fastest when kept at full charge and high temperature. For "
             "laptops that stay on mains power most of the time, holding the charge between roughly "
             "40 and 80 per cent and avoiding heat significantly slows capacity loss. Deep "
             "discharges to zero are unnecessary and mildly harmful; the old advice to 'calibrate' "
             "by fully draining the battery dates from earlier nickel-based chemistries."),
            ("Re: any battery tips for long train trips?",
             "A few things that work on pretty much any laptop: drop the screen refresh rate if it's "
             "above 60 Hz, download what you need before you board so Wi-Fi can be off, and use the "
             "browser's built-in energy saver. Video calls and games will always eat the battery, "
             "so save them for when you can plug in. A small USB-C power bank with 65 W output is "
             "cheaper than a second battery and works with most recent machines."),
        ],
        distractors=[
            ("Why do laptop batteries swell?",
             "A swollen laptop battery is caused by gas building up inside lithium-ion cells, "
             "usually from age, overheating or a manufacturing defect. Signs include a trackpad "
             "that no longer clicks or a case that does not sit flat. Stop using the machine and "
             "have the battery replaced; never puncture it."),
            ("Where to recycle an old laptop battery",
             "Laptop batteries should not go in household rubbish, where they can start fires in "
             "collection lorries. Most electronics retailers and council recycling centres accept "
             "them free of charge. Tape over the terminals before dropping them off."),
        ],
        checks=[terms_check(r"Korvix|Lumetra|Hallow", None, None, r"Korvix|Lumetra|Hallow"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c06", "content", "stance: for vs against manufacturer liability",
        "should carmakers be held liable when a self-driving car crashes",
        "Find arguments in favour of making manufacturers liable. A relevant document argues "
        "that the company that built or programmed the vehicle should pay for crashes it causes; "
        "documents arguing against manufacturer liability are not relevant.",
        "Which passages argue against putting the liability on manufacturers (keeping it with "
        "owners, drivers, insurers or a compensation fund, say)? Only those are relevant; "
        "arguments for manufacturer liability are not.",
        changed_docs=[
            ("When software drives, the maker should pay",
             "If a car is marketed as able to drive itself, the person in the seat is a passenger, "
             "not a driver. It makes no sense to blame them for a decision taken by code they "
             "cannot see or change. The company that designed, tested and sold that code is the "
             "only party able to prevent the next crash, and putting the bill on it gives it every "
             "reason to do so. Anything else lets manufacturers collect the profits of automation "
             "while passing its risks to the public."),
            ("Strict product liability for automated driving systems",
             "This article argues that crashes occurring while an automated driving system is "
             "engaged should be governed by strict liability on the system's manufacturer. Proving "
             "negligence against a developer requires access to proprietary logs and models that "
             "victims cannot realistically obtain. Because the manufacturer controls design, "
             "updates and operating limits, it is the cheapest cost-avoider, and it can spread "
             "losses through pricing and insurance. We propose a statutory presumption of "
             "manufacturer responsibility rebuttable only by proof of owner tampering."),
            ("Consumer federation submission on automated vehicle law",
             "Our members tell us they will not trust automated cars unless it is clear who pays "
             "when something goes wrong. We therefore urge the committee to place primary legal "
             "responsibility on the authorised self-driving entity, normally the vehicle "
             "manufacturer, whenever the automated mode is active. Owners should not have to fight "
             "a multinational in court to recover their losses, and insurers should be able to "
             "recover from the manufacturer automatically."),
        ],
        reversed_docs=[
            ("Industry group warns liability rules could stall autonomy",
             "A trade association representing vehicle and technology firms has told lawmakers that "
             "making manufacturers automatically liable for every crash involving automated "
             "features would delay systems that are already safer than human drivers. Its "
             "submission argues that existing insurance arrangements, in which the owner's policy "
             "pays first, work well and that manufacturers should only be pursued where a genuine "
             "defect is proven, as with any other product."),
            ("Why owners should stay on the hook for automated cars",
             "I've handled road traffic claims for twenty years, and I'm not persuaded that we need "
             "to rewrite liability for automated cars. Owners choose when to switch the system on, "
             "whether to keep software updated, and whether to use it outside the conditions it "
             "was designed for. Keeping responsibility with the owner and their insurer means "
             "victims get paid quickly, and the insurer can still sue the carmaker later if the "
             "evidence points that way."),
            ("A no-fault compensation fund for automated vehicle injuries",
             "Assigning crash liability to manufacturers creates litigation costs, discourages "
             "disclosure of safety data and may lead firms to withhold useful features. We model an "
             "alternative: a no-fault fund financed by a levy on all vehicles with automated "
             "functions, paying victims without any finding of fault. Simulations suggest "
             "compensation would be faster and administrative costs lower than under manufacturer "
             "liability, while regulators rather than courts enforce safety standards."),
        ],
        distractors=[
            ("The six levels of driving automation, explained",
             "Engineers classify driving automation from level 0, no automation, to level 5, a car "
             "that can drive itself anywhere without a human. Most cars sold today with advanced "
             "features are level 2: they can steer and brake but the driver must supervise "
             "constantly. Level 3 systems allow the driver to look away in limited conditions."),
            ("Robotaxi service expands despite ongoing crash probe",
             "A driverless taxi operator has begun carrying passengers in a second city, even as "
             "federal investigators continue to examine a crash in which one of its vehicles struck "
             "a cyclist at low speed. The company said the new service covers 50 square miles and "
             "will run around the clock."),
        ],
        checks=[length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c07", "content", "condition: rain-fed vs irrigated fields",
        "does no-till farming increase or reduce crop yields",
        "Rain-fed cropping only. A study or report that deals with irrigated fields is not relevant.",
        "Relevant documents report no-till yields on irrigated land; disregard rain-fed or "
        "dryland systems.",
        changed_docs=[
            ("Twelve years of no-till in rain-fed wheat on the southern plains",
             "We compared no-till and conventional tillage in a rain-fed winter wheat and sorghum "
             "rotation from 2008 to 2019 at a semi-arid research station. Averaged across years, "
             "no-till wheat yielded 9 per cent more than tilled wheat. The advantage was largest in "
             "dry seasons, up to 31 per cent, because untilled soil kept crop residue on the surface "
             "and stored more rain from the fallow period. In the wettest years yields did not "
             "differ."),
            ("Switching to no-till maize: what to expect in the first seasons",
             "Extension advice for rain-fed maize growers. In our on-farm trials across the "
             "sub-humid zone, fields converted to no-till typically yielded 3 to 8 per cent less "
             "in the first two seasons, mainly because of poorer early crop establishment and more "
             "weeds. From the third season yields matched or beat ploughed fields, especially where "
             "residue was retained and a legume was included in the rotation. Good planter setup "
             "is the single most important factor."),
            ("Dryland grain growers credit no-till for harvests in dry years",
             "On the wheat belt's eastern fringe, dryland farmers who abandoned the plough two "
             "decades ago say it is the reason they still harvest a crop in dry years. 'We used to "
             "lose the moisture every time we worked the ground,' said one grower who crops 2,400 "
             "hectares of dryland. A state agriculture department survey found no-till "
             "paddocks averaged about 0.3 tonnes per hectare more wheat in seasons with below-"
             "average rainfall, and similar yields otherwise."),
        ],
        reversed_docs=[
            ("No-till under centre-pivot irrigation: a ten-year maize comparison",
             "In an irrigated continuous maize system on silt loam, no-till produced on average 3 "
             "per cent less grain than chisel tillage over ten years. The penalty came from cooler, "
             "wetter seedbeds under heavy residue that slowed early growth; in a maize-soybean "
             "rotation the gap disappeared. Because irrigation removed water stress, the moisture "
             "conservation benefits of no-till seen elsewhere did not translate into higher yields "
             "here."),
            ("Zero-till wheat in irrigated rice-wheat systems",
             "Across irrigated rice-wheat fields of the Indo-Gangetic plains, sowing wheat directly "
             "into rice stubble with a zero-till drill lets farmers plant one to two weeks earlier "
             "than after ploughing. Earlier sowing avoids heat at grain filling, and farm trials "
             "report wheat yields 5 to 10 per cent higher, along with lower fuel costs and less "
             "water used in the first irrigation."),
            ("Re: going no-till on irrigated cotton, worth it?",
             "We farm irrigated cotton on furrows and went no-till about six years ago, keeping the "
             "beds permanent. First year yields dipped maybe 5 percent while we figured out "
             "residue and planter settings. Since then lint yields are about the same as our "
             "conventional neighbours, but we cut tractor passes from eight to three and water "
             "soaks in better, so we irrigate a bit less. Nobody's yields jumped though."),
        ],
        distractors=[
            ("Choosing a no-till planter",
             "A no-till planter needs heavier down-force than a conventional planter to cut through "
             "residue and place seed at an even depth. Look for coulters or row cleaners suited to "
             "your residue load, closing wheels that work in firm soil, and hydraulic down-force "
             "that adjusts row by row."),
            ("No-till and soil carbon: what the evidence says",
             "No-till is often promoted as a way to store carbon in farm soils. Long-term sampling "
             "shows more carbon near the surface under no-till, but less or no difference deeper "
             "down, so whole-profile gains are smaller than early studies suggested."),
        ],
        checks=[terms_check(r"rain-fed|rainfed|dryland|without irrigation", r"\birrigat",
                            r"\birrigat", r"rain-fed|rainfed|dryland"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c08", "content", "population: professional vs amateur athletes",
        "which exercise programmes prevent ACL injuries",
        "The athletes studied must be professional or elite. Prevention programmes evaluated "
        "in recreational, amateur or community players are not relevant.",
        "I coach a weekend amateur side. Anything whose subjects are professional or elite "
        "athletes is irrelevant; relevant documents cover recreational or amateur sport.",
        changed_docs=[
            ("Neuromuscular warm-up and ACL injury in elite women's football: a three-season cohort",
             "We followed 14 clubs in a professional women's football league over three seasons. "
             "Clubs that used a structured 20-minute neuromuscular warm-up at least twice a week, "
             "including single-leg balance, Nordic hamstring curls and landing technique drills, had "
             "an anterior cruciate ligament injury rate of 0.09 per 1,000 hours, against 0.21 in "
             "low-adherence clubs. Adherence, not programme content, best explained the "
             "difference among these elite players."),
            ("How a pro basketball team cut knee injuries",
             "The team's sports science staff have not had a non-contact ACL tear in four seasons, "
             "and they credit a daily routine that every professional on the roster completes "
             "before practice. It combines hip-strengthening exercises, deceleration and cutting "
             "drills, and jump-landing work filmed on high-speed cameras so coaches can correct "
             "knee collapse. Load is tracked during the congested game schedule, and players with "
             "poor landing scores get extra sessions."),
            ("What I learned running ACL prevention in elite rugby",
             "After six seasons as strength coach for an elite rugby squad, my view is that "
             "eccentric hamstring work and change-of-direction technique matter most. Our players "
             "do Nordic curls twice a week in-season, plus plyometric landing drills in the warm-up. "
             "We also screen every professional at preseason with a drop-jump test, and anyone "
             "showing inward knee collapse gets an individual plan."),
        ],
        reversed_docs=[
            ("Injury prevention warm-up in amateur women's football: a cluster-randomised trial",
             "Ninety-two amateur women's football teams were randomised to a 15-minute injury "
             "prevention warm-up or their usual warm-up for one season. The programme included "
             "running drills, strength, plyometrics and balance exercises. Among 1,860 players, "
             "anterior cruciate ligament injuries were 58 per cent lower in intervention teams, "
             "though the absolute numbers were small. Coaches in recreational clubs found the "
             "routine easy to run without specialist staff."),
            ("Ski school adds knee-safety training for recreational skiers",
             "Instructors at a mountain ski school now start beginner and intermediate lessons with "
             "a short knee-safety session for holidaymakers. It teaches recreational skiers to "
             "avoid the 'phantom foot' fall that tears the ACL, by keeping arms forward, hands over "
             "the skis and not trying to get up while still sliding. An earlier evaluation among "
             "holiday skiers found knee sprains roughly halved."),
            ("Netball club volunteers roll out landing programme",
             "Grassroots netball clubs in the region have adopted a free warm-up designed to reduce "
             "knee injuries in community players. Volunteer coaches were trained to teach safe "
             "landing, hip and trunk control and partner-based strength drills. In the first "
             "season across 40 amateur clubs, ACL ruptures fell from eleven to four, and many "
             "players said their balance had improved."),
        ],
        distractors=[
            ("ACL reconstruction: your recovery timeline",
             "After ACL reconstruction most people walk without crutches within a few weeks, start "
             "light jogging around three months, and return to pivoting sports after nine months "
             "or more, once strength and hop tests are nearly equal between legs. Returning too "
             "early greatly raises the risk of a second tear."),
            ("Anatomy of the anterior cruciate ligament",
             "The anterior cruciate ligament runs diagonally through the middle of the knee, from "
             "the femur to the tibia. It stops the shinbone sliding forward and limits rotation. "
             "Its two bundles tighten at different knee angles, and its poor blood supply means it "
             "does not heal once torn."),
        ],
        checks=[terms_check(r"professional|\belite\b", r"amateur|recreational|grassroots|community|leisure",
                            r"amateur|recreational|grassroots|community", r"professional|\belite\b"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c09", "content", "method: battery-electric vs other low-emission buses",
        "what is the best way for a city to cut emissions from its bus fleet",
        "Battery-electric buses are the focus; documents on any other technology are not relevant.",
        "A relevant document discusses a route to lower bus emissions other than battery-electric "
        "buses, for instance compressed natural gas or biomethane, hydrogen fuel cells or renewable "
        "diesel. Documents about battery-electric buses are not relevant.",
        changed_docs=[
            ("Transit authority annual report: fleet electrification",
             "During the year we retired 120 diesel buses and replaced them with battery-electric "
             "vehicles charged overnight at two rebuilt depots. Each electric bus avoids roughly 75 "
             "tonnes of carbon dioxide a year on our regional grid mix, and the routes converted so "
             "far account for a fifth of the fleet's former fuel use. Winter range was the main "
             "operational challenge, addressed by preconditioning cabins while buses are still "
             "plugged in."),
            ("Pantograph charging keeps electric buses running all day",
             "The city's newest routes use battery-electric buses that top up for a few minutes at "
             "each terminus through a roof-mounted pantograph. Because they charge during layovers, "
             "the buses carry smaller, lighter batteries and can run from early morning to "
             "midnight. Officials say the switch has cut tailpipe emissions on the corridor to zero "
             "and lifetime carbon emissions by over 60 per cent compared with the old diesels."),
            ("Life-cycle emissions of battery-electric city buses",
             "We estimate cradle-to-grave greenhouse gas emissions for a 12-metre battery-electric "
             "bus and a diesel equivalent over a 12-year service life. Including battery "
             "manufacture, the electric bus emits 58 to 78 per cent less, depending on the "
             "electricity mix; even on a coal-heavy grid savings exceed 25 per cent. Battery "
             "replacement at mid-life adds less than 5 per cent to the total."),
        ],
        reversed_docs=[
            ("Buses that run on sewage gas",
             "A city utility is now fuelling 80 buses with biomethane produced from the sludge at "
             "its wastewater plant. The gas is cleaned and compressed, then used in the same "
             "engines that previously burned fossil compressed natural gas. Because the methane "
             "would otherwise have been flared or released, the transport department calculates "
             "the fleet's climate emissions have fallen by about 80 per cent, with tailpipe soot "
             "and nitrogen oxides also well below diesel levels."),
            ("Hydrogen fuel cell bus trial: results after two years",
             "Twenty fuel cell buses operated on long suburban routes for two years, refuelled at a "
             "depot station supplied with hydrogen from an electrolyser. Availability reached 88 "
             "per cent after early software faults were fixed, and each bus could cover 350 km "
             "between refuels. With hydrogen made from wind power, well-to-wheel carbon emissions "
             "were about 85 per cent below diesel, though fuel costs remained higher."),
            ("Re: quickest win for a small town bus fleet?",
             "If money's tight, look at renewable diesel (HVO). It's a drop-in fuel: our 30 buses "
             "switched overnight with no engine changes, no new depot kit and no range problems. "
             "Depending on the feedstock, lifecycle CO2 drops something like 70 to 90 percent. It "
             "costs a bit more per litre than fossil diesel and doesn't fix the nitrogen oxide "
             "problem as much as people hope, but it buys you years while you plan anything bigger."),
        ],
        distractors=[
            ("Bus rapid transit: designing for ridership",
             "Bus rapid transit combines dedicated lanes, level boarding and off-board fare "
             "collection to give buses the reliability of a tram line. Ridership gains are "
             "greatest when the corridor connects dense neighbourhoods with major job centres and "
             "when buses come often enough that passengers no longer check a timetable."),
            ("City faces bus driver shortage as fleet expands",
             "The city's bus operator says it is 140 drivers short, forcing it to cancel some "
             "early-morning services, just as it takes delivery of new buses. Recruitment bonuses "
             "and a paid training scheme are being offered."),
        ],
        checks=[terms_check(r"battery-electric|electric bus",
                            r"natural gas|\bCNG\b|biomethane|hydrogen|fuel cell|hybrid|HVO|renewable diesel",
                            r"biomethane|natural gas|hydrogen|fuel cell|renewable diesel|HVO",
                            r"battery-electric|electric bus|pantograph"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c10", "content", "study type: randomised experiment vs observational",
        "does homework improve student achievement",
        "I only trust experiments. A relevant study randomly assigned students or classes to "
        "homework conditions; correlational and survey-based work does not qualify.",
        "What does observational research show, such as national surveys, cohort data, or "
        "correlations between homework time and results? Randomised experiments are not relevant.",
        changed_docs=[
            ("Daily mathematics homework and attainment: a cluster-randomised trial",
             "Forty-two Year 7 mathematics classes in 14 schools were randomly assigned either to "
             "receive short daily practice homework (about 15 minutes) or no homework for one term. "
             "Teaching was otherwise unchanged. On a standardised end-of-term test, classes given "
             "homework scored 0.16 standard deviations higher. Effects were largest for students in "
             "the lowest prior-attainment third and negligible for the highest third."),
            ("District experiment tests whether homework helps young readers",
             "For a full school year, a school district split 60 primary classrooms by lottery: half "
             "sent home 20 minutes of reading each night with a short log, and half sent nothing. "
             "Because classrooms were randomly assigned, researchers could compare them directly. "
             "Reading scores at the end of the year were slightly higher in the homework classrooms, "
             "but the difference was too small to be confident it was real."),
            ("Spaced homework practice in secondary science: a randomised field experiment",
             "Report summary. In 11 schools, 1,204 Year 9 science students were randomised "
             "individually to receive homework quizzes spaced across the term or the same "
             "questions set only in the week after each topic. Both groups did the same amount of "
             "homework. Spaced homework improved scores on a delayed test six weeks later by 7 "
             "percentage points, suggesting that how homework is scheduled matters as much as "
             "whether it is set."),
        ],
        reversed_docs=[
            ("Homework time and achievement across 40 countries",
             "Using international survey data on 15-year-olds, we examine the association between "
             "self-reported weekly homework hours and mathematics scores. Students doing up to about "
             "four hours a week scored higher than those doing none, after adjusting for family "
             "background; beyond that, additional time was linked to little or no further gain. "
             "The correlation was weaker in countries where private tutoring is common."),
            ("Homework habits and grades: findings from a national cohort",
             "A longitudinal study that has followed 11,000 children since birth reports that "
             "secondary pupils who said they did homework most evenings went on to earn better exam "
             "grades at 16, even after allowing for prior attainment and household income. The "
             "authors caution that the pattern is observational: motivated pupils may both do more "
             "homework and achieve more for other reasons."),
            ("Homework (education research)",
             "Research on homework's effects relies mostly on correlational studies comparing "
             "students who report more or less homework. Reviews find a modest positive association "
             "with achievement in secondary school and little or none in primary school. Surveys of "
             "time use also suggest that the quality of tasks and feedback matters more than "
             "minutes spent."),
        ],
        distractors=[
            ("Primary school scraps homework for younger pupils",
             "A primary school has stopped setting homework for children under nine, replacing it "
             "with a request that families read together. The head teacher said the change followed "
             "complaints about arguments at home, and that staff would review it after a year."),
            ("Helping your child with homework without doing it for them",
             "Set up a quiet spot and a regular time. Ask questions rather than giving answers: "
             "'What did your teacher show you?' Let mistakes stay on the page so the teacher can see "
             "what needs more work, and praise effort rather than speed."),
        ],
        checks=[terms_check(r"random|lottery", r"survey|correlat|observational|longitudinal",
                            r"survey|correlat|observational|longitudinal", r"random|lottery"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c11", "content", "condition: winter/freezing vs mild/summer weather",
        "how efficient are air-source heat pumps",
        "A document is relevant only if it reports heat pump efficiency in winter or at freezing "
        "outdoor temperatures.",
        "Passages about cold-weather or winter performance are not relevant. I need figures for "
        "mild or warm conditions, including summer cooling.",
        changed_docs=[
            ("Winter field trial of air-source heat pumps in northern homes",
             "We monitored 64 homes with air-source heat pumps through the winter heating season, "
             "when mean outdoor temperature was -4 C. The average seasonal coefficient of "
             "performance (COP) was 2.7, meaning 2.7 units of heat per unit of electricity. On the "
             "coldest days, below -15 C, COP fell to around 1.8 and backup resistance heating ran "
             "in a quarter of homes. Homes with oversized radiators achieved the highest efficiency."),
            ("Cold-climate heat pumps hold up in freezing snap",
             "During last month's freezing spell, when temperatures dropped to -25 C, households "
             "with newer 'cold-climate' heat pumps reported that their systems kept running without "
             "switching to backup heaters. Manufacturer data show these models still deliver about "
             "1.5 to 2 times more heat than the electricity they use at -20 C, compared with older "
             "units that lost most of their advantage below zero."),
            ("Re: real-world COP in January?",
             "Logged mine all January, an 8 kW monobloc. Outside it averaged about minus two, with "
             "a few nights at minus ten. Daily COP ranged 2.3 to 3.1, overall 2.7, with flow "
             "temperature at 40. Defrost cycles ran maybe once an hour when it was foggy and near "
             "freezing, which knocked efficiency more than the really cold dry nights did."),
        ],
        reversed_docs=[
            ("Laboratory ratings at mild outdoor temperatures",
             "In standard test conditions of 7 C outdoors and 35 C water flow, the tested "
             "air-to-water heat pumps reached coefficients of performance between 4.1 and 4.9. At "
             "12 C, typical of spring and autumn, COP rose above 5 for the best units. Efficiency "
             "falls as the gap between outdoor air and delivered water grows, so low flow "
             "temperatures matter as much as mild weather."),
            ("How efficient is a heat pump at cooling in summer?",
             "Run in reverse, an air-source heat pump is an air conditioner. On a hot summer day at "
             "35 C outside, modern inverter units typically achieve an energy efficiency ratio "
             "around 3 to 4, and seasonal cooling efficiency ratings (SEER) of 6 to 8 are common in "
             "mid-range products, well above old window units."),
            ("Six months of monitoring: our heat pump from April to September",
             "We installed an air-source heat pump last spring and have logged every kilowatt-hour "
             "since. From April to September it supplied hot water and a little heating, averaging "
             "a COP of 3.6. Hot water at 50 C was the least efficient job, about 3.0, while "
             "heating on mild evenings in April and May reached above 4. Electricity use across "
             "the summer was lower than our old immersion heater."),
        ],
        distractors=[
            ("Heat pump grants: who qualifies",
             "Homeowners replacing a fossil-fuel boiler can apply for a grant towards an air-source "
             "heat pump through an approved installer. The property needs a valid energy "
             "certificate, and loft and cavity wall insulation must be in place where recommended."),
            ("Planning rules for heat pump noise",
             "Outdoor heat pump units can be installed without planning permission if they meet "
             "noise limits at the nearest neighbour's window and are at least a metre from the "
             "property boundary. Installers use a standard calculation to check the noise level."),
        ],
        checks=[terms_check(r"winter|freez|below zero|-\d+ C|minus|January|cold",
                            r"summer|spring|autumn",
                            r"summer|spring|autumn|mild",
                            r"winter|freez|below zero|-\d+ C|minus|January|\bcold"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c12", "content", "place: islands vs mainland",
        "how do invasive predators affect native bird populations",
        "Island ecosystems. Relevant documents describe effects on birds living on islands; work "
        "set on a continental mainland is not relevant.",
        "Please leave out anything set on islands; mainland and continental ecosystems are what "
        "matters.",
        changed_docs=[
            ("The brown tree snake on Guam",
             "The brown tree snake reached Guam, probably in military cargo, shortly after the "
             "Second World War. With no native snakes and birds that had never faced such a "
             "predator, the island's forests lost most of their native bird species within four "
             "decades, including the Guam flycatcher. The loss of seed-dispersing birds is now "
             "changing how the island's forests regenerate."),
            ("Seabird recovery after rat eradication on Tarrin Island",
             "Black rats arrived on this small oceanic island with whaling ships and for a century "
             "ate the eggs and chicks of burrow-nesting petrels. Monitoring before eradication found "
             "fewer than 300 breeding pairs and almost no chicks surviving. Eight years after an "
             "aerial baiting campaign removed the rats, breeding pairs have passed 2,000, and two "
             "species not recorded on the island for decades have begun nesting."),
            ("Feral cats and island bird extinctions: a global review",
             "We compiled records of 120 islands where feral cats have been introduced. Cats were "
             "implicated in at least 14 per cent of modern bird, mammal and reptile extinctions "
             "globally, most of them on islands, where ground-nesting birds evolved without "
             "mammalian predators. Impacts were most severe on small, remote islands and when cats "
             "co-occurred with introduced rats, which sustain cat numbers through the year."),
        ],
        reversed_docs=[
            ("Feral cats and foxes: the toll on Australia's mainland birds",
             "Across mainland Australia, feral cats are estimated to kill several hundred million "
             "birds a year, while introduced red foxes take many more ground-nesting species. "
             "Inside fenced predator-free sanctuaries in the arid interior, populations of "
             "vulnerable birds such as the bush stone-curlew have recovered strongly, showing how "
             "much pressure these two predators exert across the continent."),
            ("Outdoor cats and bird declines in North America",
             "A modelling study estimated that free-ranging domestic cats in the contiguous United "
             "States kill between 1.3 and 4 billion birds each year, making them one of the largest "
             "human-linked causes of bird mortality on the continent. Unowned cats account for most "
             "of the deaths. Native songbirds that nest in shrubs near suburbs are particularly "
             "exposed."),
            ("American mink along European rivers: a threat to waterbirds",
             "American mink escaped or released from fur farms have spread along river systems "
             "across continental Europe. Where mink are present, surveys record fewer nesting "
             "coots, grebes and ducks along riverbanks and inland lakes, and trapping programmes "
             "in several catchments have been followed by a recovery in breeding success of "
             "ground-nesting waterbirds within three to five years."),
        ],
        distractors=[
            ("Invasive shrubs change where songbirds nest",
             "Non-native honeysuckle and buckthorn now dominate the understorey of many woodlands. "
             "Some native songbirds nest in them readily, but nests in these shrubs are often "
             "lower and less concealed. Volunteers are removing the shrubs and replanting native "
             "species."),
            ("Spring guide to identifying native woodland birds",
             "Learn the songs before the leaves come out: the loud trill of the wren, the mournful "
             "whistle of the bullfinch and the song thrush repeating every phrase. Native birds are "
             "easiest to see early in the morning, before the canopy closes."),
        ],
        checks=[terms_check(r"\bislands?\b|\bGuam\b", r"mainland|continent",
                            r"mainland|continent", r"\bislands?\b|\bGuam\b"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c13", "content", "study type: animal vs human",
        "health effects of intermittent fasting",
        "Research carried out in people is not relevant here; I'm after findings from animal "
        "models such as mice, rats or monkeys.",
        "Human trials and human cohort studies are the only relevant documents. Discard animal "
        "research.",
        changed_docs=[
            ("Alternate-day feeding extends lifespan in male mice",
             "Male mice were fed either without restriction or on an alternate-day schedule from 4 "
             "months of age. Mice on alternate-day feeding ate about 10 per cent fewer calories "
             "overall, yet median lifespan increased by 13 per cent. They also had lower fasting "
             "insulin, fewer liver tumours at necropsy and better performance on a rotarod test of "
             "coordination in late life."),
            ("Time-restricted feeding protects rats from diet-induced obesity",
             "Rats given a high-fat diet only during an 8-hour window each night gained 28 per cent "
             "less weight over 16 weeks than rats with round-the-clock access to the same food, "
             "despite eating a similar number of calories. The restricted animals had smaller fat "
             "deposits, less fatty liver and improved glucose tolerance, effects the authors link to "
             "better-aligned circadian rhythms in the liver."),
            ("What fasting does to a mouse brain",
             "Neuroscientists studying intermittent fasting have mostly worked with rodents, and "
             "the results are intriguing. In mice that fast every other day, neurons appear more "
             "resistant to stress, new cells form in the hippocampus, and animals engineered to "
             "develop Alzheimer-like changes show slower memory decline. Monkey studies of "
             "restricted eating hint at similar effects, though they are small and expensive."),
        ],
        reversed_docs=[
            ("Time-restricted eating plus calorie restriction in adults with obesity",
             "In a 12-month trial, 139 adults with obesity were randomised to calorie restriction "
             "alone or calorie restriction with eating confined to 8am to 4pm. Both groups lost "
             "weight, about 8 kg on average, with no significant difference between them. Blood "
             "pressure, lipids and insulin sensitivity improved similarly. Restricting the timing "
             "of meals added no benefit beyond the calorie deficit in these participants."),
            ("Fasting two days a week helps some diabetes patients, trial suggests",
             "Patients with type 2 diabetes who followed a '5:2' plan, eating about 500 to 600 "
             "calories on two days each week, lowered their blood sugar as much as those on a "
             "daily calorie-controlled diet, researchers reported. Volunteers on the 5:2 plan found "
             "it easier to stick to, but some had low-sugar episodes on fast days, so the team "
             "stressed that medication must be adjusted under medical supervision."),
            ("Re: has anyone's cholesterol changed on 16:8?",
             "I'm 52 and did 16:8 for a year as part of a study at the local hospital. Participants "
             "had bloods done every three months. My LDL dropped a bit and I lost 5 kg, but the "
             "researchers told us at the end that the group on an ordinary diet with the same "
             "calories did about as well. So for me the benefit was mostly that skipping breakfast "
             "made eating less easier."),
        ],
        distractors=[
            ("Fasting in the world's religious traditions",
             "Many faiths include periods of fasting: the daylight fast of Ramadan, the Christian "
             "observance of Lent, the Jewish fast of Yom Kippur, and fasting days in Hindu and "
             "Buddhist practice. These traditions emphasise discipline, reflection and charity."),
            ("Meal planning for an eight-hour eating window",
             "If you eat between noon and 8pm, make lunch substantial: protein, vegetables and a "
             "wholegrain. A mid-afternoon snack of yoghurt and fruit keeps energy steady, and dinner "
             "can be lighter. Batch cooking on Sundays makes the routine easier during busy weeks."),
        ],
        checks=[terms_check(r"\bmice\b|\bmouse\b|\brats?\b|rodent|monkey",
                            r"participants|volunteers|patients|\badults\b|\bpeople\b",
                            r"participants|volunteers|patients|\badults\b",
                            r"\bmice\b|\bmouse\b|\brats?\b|rodent|monkey|animal"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c14", "content", "subtopic exclusion: effects on retail and business",
        "what happens when a city centre street is pedestrianised",
        "Documents discussing the effect on shops, retail sales or local businesses are not "
        "relevant; I want the other consequences.",
        "I only want the business angle: how did pedestrianisation affect shopkeepers, trade, "
        "retail sales or shop rents?",
        changed_docs=[
            ("Air quality on Market Row one year after closure to traffic",
             "Since Market Row closed to vehicles, the council's monitoring station has recorded "
             "annual mean nitrogen dioxide of 24 micrograms per cubic metre, down from 41 the year "
             "before, and fine particle peaks during the morning rush have largely disappeared. "
             "Readings on two parallel streets rose slightly, by 3 to 4 micrograms, but remain "
             "within legal limits."),
            ("Where did the traffic go? Evaluating a city-centre street closure",
             "Counts taken six months before and after the closure show that about 14,000 vehicles "
             "a day previously used the street. Surrounding roads absorbed only around 9,000 of "
             "them; the remainder appear to have changed route, time of travel or mode. Bus "
             "journey times across the centre worsened by two minutes at first and returned to "
             "normal after signal timings were adjusted."),
            ("Pedestrian injuries fall after car-free conversion",
             "Police collision data for the five years before and three years after the conversion "
             "show pedestrian injuries on the street fell from an average of 11 a year to 2. The "
             "transport team attributes this to the removal of through traffic and the slower "
             "speeds of the delivery vehicles still allowed in the early morning."),
            ("Benches, buskers and a new kind of street life",
             "Walk down the converted street on a weekday evening and you will see people doing "
             "things they never did when it carried four lanes of traffic: children on scooters, "
             "chess players at the new tables, teenagers sitting on the steps. Observers from the "
             "university counted three times as many people stopping and lingering as before, and "
             "noise levels have dropped by about 8 decibels."),
        ],
        reversed_docs=[
            ("Retail sales up 12% in pedestrian zone, council says",
             "Card spending data show retail sales in the newly pedestrianised high street rose 12 "
             "per cent in the 18 months after the change, compared with 4 per cent across the rest "
             "of the city centre. Cafés and restaurants with outdoor seating did best, while a "
             "hardware store and a dry cleaner said they had lost customers who used to park "
             "outside."),
            ("Shopkeepers who feared the car ban now want it extended",
             "Before the street closed to traffic, two thirds of traders signed a petition against "
             "it, warning that customers would go to out-of-town retail parks. Three years on, a "
             "chamber of commerce survey finds most shop owners now support the scheme: footfall is "
             "higher, dwell times are longer and vacant units have been re-let. Some businesses "
             "dependent on bulky purchases relocated."),
            ("Pedestrianisation and commercial rents: evidence from 30 streets",
             "We study 30 streets in medium-sized cities that were pedestrianised and compare them "
             "with similar streets that were not. Ground-floor retail rents rose by an average of 7 "
             "per cent relative to the controls within five years, and shop vacancy fell. Gains "
             "were concentrated among food and beverage businesses; convenience retailers saw "
             "little change."),
        ],
        distractors=[
            ("Applying for a street party licence",
             "To hold a street party on a residential road you need to apply to the council at "
             "least six weeks in advance. If the road must be closed to traffic, a temporary "
             "closure order will be issued and barriers can be borrowed from the highways team."),
            ("Paving materials for pedestrian areas",
             "Paving in pedestrian areas must be slip-resistant in wet weather, withstand occasional "
             "delivery and emergency vehicles, and be easy to repair. Natural stone setts look "
             "attractive but can be uneven for wheelchair users; large concrete flags are cheaper."),
        ],
        checks=[terms_check(None, r"\bshops?\b|retail|sales|business|trade|traders|footfall|rent",
                            r"\bshops?\b|retail|sales|business|trade|traders", None),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c15", "content", "method: surgical vs non-surgical treatment",
        "treatment options for carpal tunnel syndrome",
        "What I need are passages on operative management, meaning carpal tunnel release, "
        "whether open or endoscopic. Conservative treatments do not count.",
        "Is there information on managing it without an operation? Splints, injections and "
        "exercises are relevant; anything about surgery is not.",
        changed_docs=[
            ("Carpal tunnel release: information for patients",
             "Carpal tunnel release is a day-case operation, usually done under local anaesthetic. "
             "The surgeon makes a small cut in the palm and divides the transverse carpal ligament "
             "to take pressure off the median nerve. Night-time tingling often improves within "
             "days. You can use the hand for light tasks straight away, but avoid heavy gripping "
             "for about four weeks. Around nine in ten patients are satisfied with the result."),
            ("Endoscopic versus open carpal tunnel release: a randomised trial",
             "We randomised 240 patients with electrophysiologically confirmed carpal tunnel "
             "syndrome to endoscopic or open release. At one year, symptom severity scores did not "
             "differ. Patients in the endoscopic group returned to work a median of 8 days earlier "
             "and reported less pillar pain at three months, while operating time was slightly "
             "longer. Complication rates were low in both arms."),
            ("Re: finally had my carpal tunnel surgery, AMA",
             "Had the right hand done three weeks ago, open release under local. Whole thing took "
             "about fifteen minutes and I watched the ceiling. The numbness at night that had been "
             "waking me up for two years was gone the first night. The scar is still sore when I "
             "lean on it and grip strength isn't back yet, but the surgeon said that's normal for "
             "six to twelve weeks."),
        ],
        reversed_docs=[
            ("Night splinting for carpal tunnel syndrome: a primary care trial",
             "Adults with mild to moderate carpal tunnel syndrome were assigned to wear a "
             "prefabricated neutral wrist splint at night for six weeks or to receive advice "
             "only. Splinted patients had greater improvement in symptom scores at six and twelve "
             "weeks, and the benefit was largest in those whose symptoms had lasted under a year. "
             "Splints are cheap and well tolerated and are a sensible first step."),
            ("Steroid injections ease carpal tunnel symptoms for months",
             "A single corticosteroid injection into the carpal tunnel relieved numbness and "
             "tingling for most patients in a study of 180 people, with benefits lasting around "
             "three months and about a third still improved after a year. Doctors said injections "
             "are a reasonable option for people with mild symptoms or for pregnant women, whose "
             "symptoms often resolve after birth."),
            ("Hand therapy for carpal tunnel: nerve gliding and activity changes",
             "Hand therapists treat carpal tunnel syndrome with a combination of measures: a night "
             "splint to keep the wrist straight, nerve and tendon gliding exercises done several "
             "times a day, and changes to activities that involve sustained gripping or bending the "
             "wrist. Evidence for exercises alone is limited, but many people find the combined "
             "programme controls their symptoms."),
        ],
        distractors=[
            ("Diagnosing carpal tunnel syndrome",
             "Carpal tunnel syndrome is suspected from tingling in the thumb, index and middle "
             "fingers, often worse at night. Doctors may tap over the wrist or ask you to hold it "
             "bent for a minute to reproduce symptoms, and nerve conduction studies can confirm the "
             "diagnosis and show how severe the compression is."),
            ("Who gets carpal tunnel syndrome?",
             "Carpal tunnel syndrome is more common in women and in people aged 40 to 60. Risk "
             "factors include pregnancy, diabetes, underactive thyroid, rheumatoid arthritis, "
             "obesity and work that involves vibrating tools or repetitive forceful gripping."),
        ],
        checks=[terms_check(r"surg|\brelease\b|operat", r"splint|inject|steroid|exercise",
                            r"splint|inject|steroid|exercise", r"surg|\brelease\b|operat"),
                length_check],
    ),

    # -----------------------------------------------------------------------------------------
    topic(
        "c16", "content", "place: urban vs rural",
        "what causes slow ambulance response times",
        "Restrict this to towns and cities: delays in urban or metropolitan areas. Rural and "
        "remote areas are out of scope.",
        "Out in the countryside is what matters, meaning ambulance delays in rural or remote "
        "areas. Urban ones are not relevant.",
        changed_docs=[
            ("Gridlock and handover queues push city ambulance waits past target",
             "Ambulances in the capital took an average of 11 minutes to reach the most serious "
             "calls last winter, two minutes over target. Service managers blamed two things: crews "
             "stuck outside city hospitals waiting to hand over patients, sometimes for hours, and "
             "congestion on arterial roads where bus lanes and roadworks leave little room to pull "
             "over. Each hour lost at hospital doors takes an ambulance out of the city's available "
             "fleet."),
            ("Response times in metropolitan emergency medical services: an analysis of 1.2 million calls",
             "We analysed emergency calls in four metropolitan areas. Travel time accounted for "
             "only 38 per cent of total response time; the rest was call processing and waiting for "
             "a free unit. Unit availability was driven mainly by hospital turnaround times, which "
             "doubled at the busiest urban emergency departments. Peak-hour traffic added a median "
             "of 90 seconds in downtown districts."),
            ("The last 100 metres: why city calls take longer than you think",
             "As an urban paramedic, the drive is often not the slow part. It's finding the right "
             "tower block on an estate where the numbering makes no sense, waiting for someone to "
             "buzz us in, then a broken lift and eight floors of stairs with the kit. We've timed "
             "it: on high-rise jobs in the city centre, getting from the ambulance to the patient "
             "can take six or seven minutes."),
        ],
        reversed_docs=[
            ("Distance, station closures and rural ambulance waits",
             "In rural counties the median ambulance response to life-threatening calls is almost "
             "twice the national target. The main reason is distance: consolidation has closed small "
             "stations in market villages, so the nearest vehicle may be 30 km away on winding "
             "roads. When that crew is already on a long transfer to a regional hospital, the next "
             "one may be further still."),
            ("Volunteer crews and the remote response gap",
             "Many remote communities rely on volunteer ambulance crews who respond from home or "
             "work. Our survey of 112 volunteer services found that one in four calls was delayed "
             "by more than ten minutes because no trained volunteer was available, especially on "
             "weekday daytimes when younger members commute out of the village. Recruitment has "
             "fallen steadily over the past decade."),
            ("Re: why did it take 50 minutes for the ambulance to reach the farm?",
             "I've worked dispatch for a rural service for years. Often it's not one thing. The "
             "nearest crew was probably on another job, the next one came from two valleys over, "
             "and farm addresses are a nightmare: postcodes cover huge areas and sat-navs take "
             "crews to the wrong gate. If you live remote, put a clear sign at the lane end and "
             "send someone to meet them on the road."),
        ],
        distractors=[
            ("What happens when you call for an ambulance",
             "The call handler will ask for the address, a phone number and what has happened, then "
             "work through questions about breathing and consciousness. Stay on the line: they may "
             "give first aid instructions while help is arranged."),
            ("Ambulance service orders 200 new vehicles",
             "The regional ambulance service has ordered 200 new emergency vehicles with lighter "
             "bodies and improved stretcher loading systems, designed to reduce back injuries among "
             "staff. The first will enter service in the spring."),
        ],
        checks=[terms_check(r"\bcity\b|\bcities\b|urban|metropolitan|downtown|capital",
                            r"rural|remote|village|countryside|\bfarms?\b",
                            r"rural|remote|village|countryside",
                            r"\bcity\b|\bcities\b|urban|metropolitan|downtown|capital"),
                length_check],
    ),
]
