/*
 * Material for MkDocs' own search worker, with two changes for this bilingual course.
 *
 * 1. Each language searches its own pages. The site has one search index for both languages;
 *    the page that starts this worker says which pages are its own (`prefix`, the language's
 *    folder, "" for the default language, whose pages are those outside the `others` folders).
 * 2. Chinese questions typed as sentences find pages. Material 9.x cuts a run of Chinese
 *    characters into words it finds in the index, but its loop never tries the run's last
 *    character and stops at the first character that starts no indexed word (a particle such
 *    as 是 or 在, which the stop-word filter keeps out of the index), and the words it keeps are
 *    glued to the Latin word that follows ("模型在GPU上…" became the single term
 *    "模型GPU上但是数据在CPU上", which matches nothing, so the whole query found nothing).
 *    Here every run is cut into the longest words the index holds, characters that start no
 *    indexed word and filler words of questions (怎么, 为什么…) are dropped, and the words are
 *    handed to Material separated by spaces, each then searched as a word prefix as usual.
 * 3. Pages that hold more of the query's words come first. Material ranks a page by its best
 *    section's score, in which a word of a title weighs a thousand words of text: a pasted error
 *    message then lists first the pages whose titles share a few of its words ("device", "cuda"),
 *    before the page whose section quotes the whole message. Here a page's rank is the largest
 *    share of the query's words that one of its sections holds (Material's "missing" terms, each
 *    weighed by how few sections hold it: "mask" counts, "device" hardly), plus
 *    how much of the query its profile holds: the words of its title, its headings and the
 *    `keywords` of its front matter (the phrases readers use for a chapter's problem, such as
 *    "model on the GPU, data on the CPU", which tools/mkdocs_hooks.py puts into the index), each
 *    word weighed by how few pages' profiles hold it. A short question ("which layer is on the
 *    CPU") has its words in a section of almost every chapter; its chapter is the one whose
 *    profile names it. Material's order is kept among pages with the same rank.
 * 4. An English query on the Chinese pages (a pasted error message) lists them in the order the
 *    English site lists their English twins. The Chinese pages quote the messages in English, but
 *    their titles and headings are Chinese: ranked on their own, the few English words of a title
 *    ("... should be the same" in chapter 02's) outweighed the chapter that explains the message.
 *    This worker starts a second one, itself with the English site's parameters, asks it the same
 *    query and orders its own results by the twins' places there (pages without a twin in its
 *    answer keep their order, after the others). Without nested workers, or should it fail, the
 *    results keep the order of 1-3.
 *
 * The hook in tools/mkdocs_hooks.py points every page at this file:
 *   course-search.js?worker=search.<hash>.min.js&prefix=zh/&others=zh/
 * Everything else (ranking, highlighting, results) is Material's, unchanged.
 */
(function () {
  "use strict"

  var params = new URLSearchParams(self.location.search)
  var prefix = params.get("prefix") || ""
  var others = (params.get("others") || "").split(",").filter(Boolean)

  // Words that carry no topic in a Chinese question (interrogatives, conjunctions, pronouns).
  var FILLER = new Set((
    "怎么 怎么办 怎么样 怎样 如何 什么 为什么 为何 哪个 哪些 哪里 是否 能否 能不能 是不是 有没有 " +
    "但是 可是 然后 所以 因为 如果 而且 还是 或者 就是 一个 这个 那个 这样 那样 我 我们 我的 你 " +
    "吗 呢 吧 啊 呀 了 的 得 地 请问 求助 一下"
  ).split(" "))
  var HAN = /\p{sc=Han}+/gu

  // How much a page's profile (title, headings, keywords) counts beside its best section's share: fully
  // for a short question, less for a long pasted message, whose best section says more.
  function profileWeight(words) { return Math.min(1, 5 / Math.max(1, words.length)) }
  var STOP = new Set((
    "a an and are as at be but by do does did for from has have how i if in into is it its me my no not of " +
    "on or so that the their then there these they this to too was what when where which while who why " +
    "will with you your can should get gets got still"
  ).split(" "))
  var separator = /[\s\u200b\-_,:!=\[\]()"`/]+|\.(?!\d)/
  var profiles = new Map()    // page location -> {latin: Set of words, han: its Chinese text}
  var profileWords = new Set()  // the Chinese words of the keywords (cut by jieba at build time)

  function pageOf(location) { return location.split("#")[0] }

  /** Build each page's profile from its title, its sections' titles and its keywords. */
  function buildProfiles(docs) {
    var texts = new Map()
    docs.forEach(function (doc) {
      var page = pageOf(doc.location)
      var text = (texts.get(page) || "") + " " + (doc.title || "") + " " + (doc.keywords || []).join(" ")
      texts.set(page, text.replace(/<[^>]*>/g, " ").toLowerCase())
    })
    profiles = new Map()
    profileWords = new Set()
    docs.forEach(function (doc) {
      (doc.keywords || []).join(" ").split(separator).forEach(function (word) {
        if (/^\p{sc=Han}{2,}$/u.test(word)) {
          profileWords.add(word)
          longest = Math.max(longest, word.length)
        }
      })
    })
    texts.forEach(function (text, page) {
      profiles.set(page, Object.assign(wordsOf(text), {phrases: []}))
    })
    docs.forEach(function (doc) {
      var phrases = profiles.get(pageOf(doc.location)).phrases
      phrases.push(wordsOf((doc.title || "").replace(/<[^>]*>/g, " ").toLowerCase()))
      ;(doc.keywords || []).forEach(function (phrase) { phrases.push(wordsOf(phrase.toLowerCase())) })
    })
  }

  function wordsOf(text) {
    return {latin: new Set(text.replace(HAN, " ").split(separator).filter(Boolean)),
            han: (text.match(HAN) || []).join(" ")}
  }

  function holds(profile, word) {
    if (/\p{sc=Han}/u.test(word))
      return profile.han.indexOf(word) >= 0
    if (profile.latin.has(word))
      return true
    // plurals and endings: "gpus" holds "gpu", "labels" holds "label"
    for (var known of profile.latin)
      if (known.length >= 3 && word.length >= 3 && (known.startsWith(word) || word.startsWith(known)) &&
          Math.abs(known.length - word.length) <= 2)
        return true
    return false
  }

  /** The query's topic words: Chinese words as cut by segmentChinese, Latin words without stop words. */
  function queryWords(query) {
    var found = new Set()
    query.toLowerCase().split(separator).forEach(function (word) {
      if (word && !STOP.has(word) && !FILLER.has(word) && !/^\d+$/.test(word))
        found.add(word)
    })
    return Array.from(found)
  }

  /** The share of the query's weight (rarer words weigh more) that a page's profile holds. */
  function profileScores(words) {
    var total = profiles.size
    var weight = new Map()
    words.forEach(function (word) {
      var count = 0
      profiles.forEach(function (profile) { if (holds(profile, word)) count++ })
      if (count > 0)
        weight.set(word, Math.log(1 + total / count))
    })
    var sum = 0
    weight.forEach(function (value) { sum += value })
    function share(words) {
      var got = 0
      weight.forEach(function (value, word) { if (holds(words, word)) got += value })
      return sum ? got / sum : 0
    }
    // half for the words anywhere in the profile, half for the most of them that one phrase (a heading,
    // a keyword) holds: "which layer is on the CPU" is one phrase of chapter 09, two of chapter 05
    var scores = new Map()
    profiles.forEach(function (profile, page) {
      var best = 0
      profile.phrases.forEach(function (phrase) { best = Math.max(best, share(phrase)) })
      scores.set(page, (share(profile) + best) / 2)
    })
    return scores
  }

  var lastWords = []

  var documents = 1          // sections in this language's index
  var rarity = new Map()     // term -> its weight: log(1 + sections / sections holding it)

  /** How much a term of the query weighs: "mask" much more than "device", which every page holds. */
  function weightOf(term) {
    if (!rarity.has(term)) {
      var postings = (realInvertedIndex || (index && index.invertedIndex) || {})[term]
      var holding = new Set()
      if (postings)
        ["title", "text", "tags"].forEach(function (field) {
          Object.keys(postings[field] || {}).forEach(function (ref) { holding.add(ref) })
        })
      rarity.set(term, Math.log(1 + documents / Math.max(1, holding.size)))
    }
    return rarity.get(term)
  }

  /** The largest share of the query's weight that one section of a page holds (rarer terms weigh more). */
  function coverage(group) {
    var best = 0
    group.forEach(function (item) {
      var terms = Object.keys(item.terms || {})
      var total = 0, found = 0
      terms.forEach(function (term) {
        var weight = weightOf(term)
        total += weight
        if (item.terms[term])
          found += weight
      })
      if (total > 0)
        best = Math.max(best, found / total)
    })
    return best
  }

  // ---- 4. the English twin: a worker that searches the English pages, for English queries here
  var LATIN_WORD = /[a-z]{2,}/i
  var ANY_HAN = /\p{sc=Han}/u
  var twin = null              // the English site's worker, started on the other languages' pages
  var twinReplies = []         // resolvers of the questions asked to the twin, oldest first
  var answers = []             // for each query handed to Material: a promise of the twin's order, or null
  var sent = Promise.resolve() // replies leave in the order of the queries, each after its twin's answer

  /** Whether a query is written in English: no Chinese character, two words or more. */
  function englishQuery(query) {
    return !ANY_HAN.test(query) && query.trim().split(/\s+/).filter(function (word) {
      return LATIN_WORD.test(word)
    }).length >= 2
  }

  function startTwin(setup) {
    if (!prefix || typeof Worker === "undefined")
      return
    try {
      var address = new URL(self.location.href)
      address.searchParams.set("prefix", "")
      twin = new Worker(address.href)
    } catch (error) {
      twin = null
      return
    }
    twin.onmessage = function (event) {
      if (event.data && event.data.type === 3 && twinReplies.length)
        twinReplies.shift()(event.data.data.items.map(function (group) {
          return group.length ? pageOf(group[0].location) : ""
        }))
    }
    twin.onerror = function () {
      twin = null
      twinReplies.splice(0).forEach(function (resolve) { resolve(null) })
    }
    twin.postMessage(setup)
  }

  /** The English site's result pages for a query, best first (null if the twin cannot say within 3 s). */
  function askTwin(query) {
    if (twin === null || !englishQuery(query))
      return null
    return new Promise(function (resolve) {
      twinReplies.push(resolve)
      setTimeout(function () { resolve(null) }, 3000)
      twin.postMessage({type: 2, data: query})
    })
  }

  /** This language's result groups in the order the twin gave their English twins. */
  function inTwinsOrder(items, order) {
    var place = new Map()
    order.forEach(function (page, number) { if (!place.has(page)) place.set(page, number) })
    return items.map(function (group, number) {
      var page = group.length ? pageOf(group[0].location) : ""
      var twinPage = page.startsWith(prefix) ? page.slice(prefix.length) : page
      return {group: group, place: place.has(twinPage) ? place.get(twinPage) : Infinity, number: number}
    }).sort(function (a, b) {
      return a.place - b.place || a.number - b.number
    }).map(function (entry) { return entry.group })
  }

  // Material answers with postMessage: order its result pages before they leave the worker, each
  // reply after the twin's answer to its query when it waits for one, and in the order of the queries.
  var postMessage = self.postMessage.bind(self)
  self.postMessage = function (message) {
    var answer = null
    if (message && message.type === 3 && message.data && Array.isArray(message.data.items)) {
      answer = answers.shift() || null
      message.data.items = ranked(message.data.items)
    }
    sent = sent.then(function () { return answer }).then(function (order) {
      if (order)
        message.data.items = inTwinsOrder(message.data.items, order)
      postMessage(message)
    })
    return undefined
  }

  /** Material's result groups ranked by coverage and profile (2. and 3. above), for the last query. */
  function ranked(items) {
    var scores = profileScores(lastWords)
    var weight = profileWeight(lastWords)
    return items.map(function (group, place) {
      var page = group.length ? pageOf(group[0].location) : ""
      return {group: group, rank: coverage(group) + weight * (scores.get(page) || 0), place: place}
    }).sort(function (a, b) {
      return b.rank - a.rank || a.place - b.place
    }).map(function (entry) { return entry.group })
  }

  // Material registers its message listener while its script runs: keep it, to call it ourselves.
  var materialListener = null
  var addEventListener = self.addEventListener
  self.addEventListener = function (type, listener) {
    if (type === "message" && materialListener === null) {
      materialListener = listener
      return undefined
    }
    return addEventListener.apply(self, arguments)
  }
  importScripts(params.get("worker"))
  self.addEventListener = addEventListener

  var lunr = self.lunr
  var index = null            // the lunr index Material builds
  var words = new Set()       // the Chinese words in it
  var longest = 1
  var realInvertedIndex = null

  var build = lunr.Builder.prototype.build
  lunr.Builder.prototype.build = function () {
    index = build.apply(this, arguments)
    words = new Set(Object.keys(index.invertedIndex).filter(function (term) {
      return /^\p{sc=Han}+$/u.test(term)
    }))
    words.forEach(function (word) { longest = Math.max(longest, word.length) })
    return index
  }

  // Material's own search hands lunr the query after its segmentation: the index is whole again.
  var search = lunr.Index.prototype.search
  lunr.Index.prototype.search = function () {
    restore()
    return search.apply(this, arguments)
  }

  function restore() {
    if (index !== null && realInvertedIndex !== null) {
      index.invertedIndex = realInvertedIndex
      realInvertedIndex = null
    }
  }

  /** Cut one run of Chinese characters into the longest words the index holds. */
  function cut(run) {
    var found = []
    for (var i = 0; i < run.length;) {
      var length = Math.min(longest, run.length - i)
      while (length > 0 && !words.has(run.slice(i, i + length)) && !profileWords.has(run.slice(i, i + length)))
        length--
      if (length === 0) {
        i++  // starts no indexed word: a particle, or a word no page uses
        continue
      }
      var word = run.slice(i, i + length)
      if (!FILLER.has(word))
        found.push(word)
      i += length
    }
    return found
  }

  /** The query with every run of Chinese characters replaced by its words, space-separated. */
  function segmentChinese(query) {
    return query.replace(HAN, function (run) {
      return " " + cut(run).join(" ") + " "
    }).replace(/\s+/g, " ").trim()
  }

  function ownPage(doc) {
    var location = doc.location
    if (prefix)
      return location.startsWith(prefix)
    return !others.some(function (other) { return location.startsWith(other) })
  }

  addEventListener.call(self, "message", function (event) {
    var message = event.data
    if (message && message.type === 0 && message.data && Array.isArray(message.data.docs)) {
      // SETUP: build the index from this language's pages only
      var docs = message.data.docs.filter(ownPage)
      buildProfiles(docs)
      documents = docs.length
      rarity = new Map()
      startTwin(message)
      message = {type: 0, data: Object.assign({}, message.data, {docs: docs})}
      return materialListener({data: message})
    }
    if (message && message.type === 2)
      answers.push(typeof message.data === "string" ? askTwin(message.data) : null)
    if (message && message.type === 2 && typeof message.data === "string" && index !== null) {
      // QUERY: Material segments Chinese runs by looking words up in the index; give it none to
      // find, so that it keeps each of our words whole. Its search runs synchronously in the call.
      // lunr reads "word:" as a field name and fails on it (no results at all): a colon is a separator
      var query = segmentChinese(message.data.replace(/[:"]+/g, " "))
      lastWords = queryWords(query)
      message = {type: 2, data: query}
      realInvertedIndex = index.invertedIndex
      index.invertedIndex = Object.create(null)
      try {
        return materialListener({data: message})
      } finally {
        restore()
      }
    }
    return materialListener(event)
  })
})()
