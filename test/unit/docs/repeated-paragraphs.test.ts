// The repeat check of the docs test: what it flags and what it lets through, on the README's own
// doubled paragraph (README.md:124-135 at e304b1b) and on paragraphs that only share a subject.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { contentWords, normalisedSentences } from '../../support/docs/normalised-sentences.js'
import { REPEAT_THRESHOLDS, repeatedParagraphs } from '../../support/docs/repeated-paragraphs.js'

/** README.md:124-135 at e304b1b, verbatim: the install paragraph said twice in other words. */
const TWIN = `Both install what they need: npm packages (\`npm ci\`) and, on first use, the control-plane binaries,
built from Go modules into \`~/.cache/metacontroller-ts/controlplane/\` (a cold build takes about
20 minutes on 2 cores; later runs reuse the cache, and a cache from before kube-scheduler and KWOK
were added only gets the two new binaries). A whole cold \`make test\`, the real node, Traefik and
helm built too, took 40 min 21 s on 2 cores, and 44 min 23 s on a just-booted machine with no
binary or Go cache and no Debian packages (docs/control-plane.md). Requirements: Node >= 20.19, Go >= 1.26,
\`make\`, and \`kubectl\` for the tests.
They install what they need: npm packages (\`npm ci\`, which also builds \`dist/\`) and, on first use,
the control-plane binaries, built from Go modules into \`~/.cache/metacontroller-ts/controlplane/\` (a
cold build takes about 20 minutes on 2 cores; later runs reuse the cache). Requirements: Node >=
20.19, Go >= 1.26, \`make\`, and \`kubectl\` for the tests. The example itself, and how to run it on
kind, is in [examples/podservice](examples/podservice/README.md).`

const [FIRST, SECOND] = TWIN.split(/\n(?=They install)/)

/** Two paragraphs on one subject (the engine's flags) that state different things. */
const SAME_SUBJECT = [
  `\`metactl run --help\` lists the flags; they carry upstream's names (\`--workers\`,
\`--discovery-interval\`, \`--cache-flush-interval\`), plus \`--revision-namespace\`, where the
ControllerRevisions of cluster-scoped parents' rolling updates live.`,
  `\`--apply-strategy=server-side-apply\` writes children with server-side apply (field manager
\`metacontroller\`, \`force\`) instead of the default client-side 3-way \`dynamic-apply\`; it repairs
drift of every kind and writes nothing while children hold what the hooks ask for.`,
]

describe('repeatedParagraphs', () => {
  it('flags the README twin as one paragraph that says its sentences again', () => {
    const found = repeatedParagraphs([{ file: 'README.md', text: TWIN }])
    assert.equal(found.length, 1)
    assert.match(found[0] ?? '', /^README\.md:1 says again/)
  })

  it('flags the twin when its halves are two paragraphs, in one file or in two', () => {
    const oneFile = repeatedParagraphs([
      { file: 'a.md', text: `${FIRST ?? ''}\n\n${SECOND ?? ''}` },
    ])
    assert.deepEqual(oneFile.length, 1)
    assert.match(oneFile[0] ?? '', /^a\.md:9 repeats a\.md:1/)
    const twoFiles = repeatedParagraphs([
      { file: 'a.md', text: FIRST ?? '' },
      { file: 'b.md', text: `# Title\n\n${SECOND ?? ''}` },
    ])
    assert.match(twoFiles[0] ?? '', /^b\.md:3 repeats a\.md:1/)
  })

  it('lets each half of the twin through on its own', () => {
    assert.deepEqual(repeatedParagraphs([{ file: 'a.md', text: FIRST ?? '' }]), [])
    assert.deepEqual(repeatedParagraphs([{ file: 'a.md', text: SECOND ?? '' }]), [])
  })

  it('lets paragraphs that share a subject but state different things through', () => {
    assert.deepEqual(repeatedParagraphs([{ file: 'a.md', text: SAME_SUBJECT.join('\n\n') }]), [])
  })

  it('ignores fenced code, headings and tables, which are alike by nature', () => {
    const block = '```sh\nmake demo   # the PodService example on a local control plane\n```'
    const row = '| `metactl run` | the engine, with every flag upstream has, and more |'
    const heading = `# ${(SAME_SUBJECT[0] ?? '').split('\n').join(' ')}`
    const text = [block, block, row, row, heading, heading]
    assert.deepEqual(repeatedParagraphs([{ file: 'a.md', text: text.join('\n\n') }]), [])
  })

  it('flags a short paragraph only when it holds enough words to be a statement', () => {
    const echo = 'Every command has `--help`.'
    assert.deepEqual(repeatedParagraphs([{ file: 'a.md', text: `${echo}\n\n${echo}` }]), [])
    assert.ok(REPEAT_THRESHOLDS.minWords > contentWords(echo).length)
  })
})

describe('normalised sentences', () => {
  it('drop case, punctuation, Markdown and stop words, and keep numbers', () => {
    assert.deepEqual(contentWords('A cold build takes about **16 minutes** on `2 cores`.'), [
      'cold',
      'build',
      'takes',
      '16',
      'minutes',
      '2',
      'cores',
    ])
    assert.deepEqual(contentWords('[the guide](docs/deploy.md) lists 10,000 parents'), [
      'guide',
      'lists',
      '10000',
      'parents',
    ])
  })

  it('split after a full stop, not after e.g. or a version number', () => {
    const sentences = normalisedSentences(
      'Go >= 1.26 builds it, e.g. on Linux. Then it runs; fast.'
    )
    assert.deepEqual(
      sentences.map((s) => s.text),
      ['Go >= 1.26 builds it, e.g. on Linux.', 'Then it runs;', 'fast.']
    )
  })
})
