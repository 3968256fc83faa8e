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
 *    before the page whose section quotes the whole message. Here pages are ordered by the largest
 *    share of the query's words that one of their sections holds (Material's "missing" terms),
 *    and Material's order is kept among pages with the same share.
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

  /** The largest share of the query's terms that one section of a page holds. */
  function coverage(group) {
    var best = 0
    group.forEach(function (item) {
      var terms = Object.keys(item.terms || {})
      if (terms.length) {
        var found = terms.filter(function (term) { return item.terms[term] }).length
        best = Math.max(best, found / terms.length)
      }
    })
    return best
  }

  // Material answers with postMessage: order its result pages before they leave the worker.
  var postMessage = self.postMessage.bind(self)
  self.postMessage = function (message) {
    if (message && message.type === 3 && message.data && Array.isArray(message.data.items)) {
      var ranked = message.data.items.map(function (group, place) {
        return {group: group, share: coverage(group), place: place}
      })
      ranked.sort(function (a, b) { return b.share - a.share || a.place - b.place })
      message.data.items = ranked.map(function (entry) { return entry.group })
    }
    return postMessage(message)
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
      while (length > 0 && !words.has(run.slice(i, i + length)))
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
      message = {type: 0, data: Object.assign({}, message.data, {docs: message.data.docs.filter(ownPage)})}
      return materialListener({data: message})
    }
    if (message && message.type === 2 && typeof message.data === "string" && index !== null) {
      // QUERY: Material segments Chinese runs by looking words up in the index; give it none to
      // find, so that it keeps each of our words whole. Its search runs synchronously in the call.
      message = {type: 2, data: segmentChinese(message.data)}
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
