/**
 * The string syntax of label selectors (`labels.Parse`): a tokenizer and a recursive-descent
 * parser that name the column of every error.
 *
 * @module
 */
import type {
  LabelSelector,
  LabelSelectorOperator,
  LabelSelectorRequirement,
} from './label-selector.js'
import { LabelSelectorError } from './label-selector-error.js'
import { checkKey, checkValue } from './label-syntax.js'

/**
 * Parses the string syntax of `--target-label-selector` and the API's `labelSelector` query.
 *
 * @remarks
 * Comma-separated requirements, all ANDed: `a=b` or `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x,y)`, `a` (exists) and `!a` (does not exist). Whitespace around tokens is ignored
 * and the empty string selects everything. `a!=b` becomes `NotIn [b]`, which has the same meaning
 * (it also matches objects without the key). The `>` and `<` operators of `labels.Parse` cannot be
 * expressed as a {@link LabelSelector} and are refused. Errors are {@link LabelSelectorError}s
 * that name the column and what was expected there.
 */
export function parseSelectorString(text: string): LabelSelector {
  return new SelectorParser(text).parse()
}

/** A parsed requirement; `Equals` comes from `=` and `==`. */
interface Requirement {
  readonly key: string
  readonly operator: 'Equals' | LabelSelectorOperator
  readonly values: readonly string[]
}

type TokenType = 'identifier' | '!' | '!=' | '=' | '==' | '(' | ')' | ',' | '>' | '<' | 'end'

interface Token {
  readonly type: TokenType
  readonly text: string
  /** Offset of the token in the selector text. */
  readonly offset: number
}

const WHITESPACE = new Set([' ', '\t', '\r', '\n'])
const SPECIAL = new Set(['!', '=', '(', ')', ',', '>', '<'])

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const char = text.charAt(i)
    if (WHITESPACE.has(char)) {
      i++
      continue
    }
    const offset = i
    if ((char === '!' || char === '=') && text.charAt(i + 1) === '=') {
      const type = char === '!' ? '!=' : '=='
      tokens.push({ type, text: type, offset })
      i += 2
    } else if (SPECIAL.has(char)) {
      tokens.push({ type: char as TokenType, text: char, offset })
      i++
    } else {
      while (i < text.length && !SPECIAL.has(text.charAt(i)) && !WHITESPACE.has(text.charAt(i))) {
        i++
      }
      tokens.push({ type: 'identifier', text: text.slice(offset, i), offset })
    }
  }
  tokens.push({ type: 'end', text: '', offset: text.length })
  return tokens
}

/** A recursive-descent parser for the `labels.Parse` grammar (minus `>` and `<`). */
class SelectorParser {
  private readonly tokens: Token[]
  private position = 0

  constructor(private readonly text: string) {
    this.tokens = tokenize(text)
  }

  parse(): LabelSelector {
    const requirements: Requirement[] = []
    if (this.peek().type !== 'end') {
      for (;;) {
        requirements.push(this.requirement())
        const token = this.next()
        if (token.type === 'end') break
        if (token.type !== ',') this.fail(token, `expected "," or the end of the selector`)
        const following = this.peek()
        if (following.type !== 'identifier' && following.type !== '!') {
          this.fail(following, 'expected a requirement after ","')
        }
      }
    }
    return toLabelSelector(requirements)
  }

  private requirement(): Requirement {
    let token = this.next()
    const negated = token.type === '!'
    if (negated) token = this.next()
    if (token.type !== 'identifier') {
      this.fail(token, negated ? 'expected a label key after "!"' : 'expected a label key or "!"')
    }
    const key = this.check(token, () => checkKey(token.text, 'key'))
    if (negated) return { key, operator: 'DoesNotExist', values: [] }
    const following = this.peek()
    if (following.type === 'end' || following.type === ',') {
      return { key, operator: 'Exists', values: [] }
    }
    const operator = this.next()
    switch (operator.type) {
      case '=':
      case '==':
        return { key, operator: 'Equals', values: [this.exactValue()] }
      case '!=':
        return { key, operator: 'NotIn', values: [this.exactValue()] }
      case '>':
      case '<':
        return this.fail(
          operator,
          `the "${operator.type}" operator is not supported here; use =, !=, in or notin`
        )
      case 'identifier':
        if (operator.text === 'in' || operator.text === 'notin') {
          const values = this.valueList(operator)
          return { key, operator: operator.text === 'in' ? 'In' : 'NotIn', values }
        }
        break
      case '!':
      case '(':
      case ')':
      case ',':
      case 'end':
        break
    }
    return this.fail(operator, 'expected an operator: =, ==, !=, in or notin')
  }

  private exactValue(): string {
    const following = this.peek()
    if (following.type === 'end' || following.type === ',') return ''
    const token = this.next()
    if (token.type !== 'identifier') this.fail(token, 'expected a label value')
    return this.check(token, () => checkValue(token.text, 'value'))
  }

  private valueList(operator: Token): string[] {
    const open = this.next()
    if (open.type !== '(') this.fail(open, `expected "(" after "${operator.text}"`)
    const values: string[] = []
    let current: Token | undefined
    let sawComma = false
    for (;;) {
      const token = this.next()
      if (token.type === 'identifier') {
        if (current !== undefined) this.fail(token, 'expected "," or ")" between values')
        current = token
      } else if (token.type === ',' || token.type === ')') {
        if (current !== undefined || token.type === ',' || sawComma) {
          const item = current
          values.push(
            item === undefined ? '' : this.check(item, () => checkValue(item.text, 'value'))
          )
        }
        if (token.type === ')') break
        current = undefined
        sawComma = true
      } else {
        this.fail(token, 'expected a value, "," or ")"')
      }
    }
    if (values.length === 0) {
      this.fail(open, `operator ${operator.text} needs at least one value inside "( )"`)
    }
    return [...new Set(values)]
  }

  private peek(): Token {
    return this.tokens[this.position] ?? this.endToken()
  }

  private next(): Token {
    const token = this.peek()
    if (token.type !== 'end') this.position++
    return token
  }

  private endToken(): Token {
    return { type: 'end', text: '', offset: this.text.length }
  }

  /** Runs a validation and rethrows its error with the selector text and column. */
  private check<T>(token: Token, validate: () => T): T {
    try {
      return validate()
    } catch (error) {
      if (!(error instanceof LabelSelectorError)) throw error
      const reason = error.message.replace(/^invalid label selector: (?:key|value): /, '')
      return this.fail(token, reason)
    }
  }

  private fail(token: Token, reason: string): never {
    const found = token.type === 'end' ? 'the end of the selector' : JSON.stringify(token.text)
    const detail = reason.startsWith('expected') ? `${reason}, found ${found}` : reason
    throw new LabelSelectorError(
      `invalid label selector ${JSON.stringify(this.text)}: at column ${token.offset + 1}: ` +
        `${detail} (syntax: "a=b,c!=d,e in (x,y),f notin (z),g,!h")`,
      this.text
    )
  }
}

function toLabelSelector(requirements: readonly Requirement[]): LabelSelector {
  const matchLabels: Record<string, string> = {}
  const matchExpressions: LabelSelectorRequirement[] = []
  for (const { key, operator, values } of requirements) {
    if (operator === 'Equals' && !Object.hasOwn(matchLabels, key)) {
      matchLabels[key] = values[0] ?? ''
    } else if (operator === 'Equals') {
      matchExpressions.push({ key, operator: 'In', values })
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      matchExpressions.push({ key, operator })
    } else {
      matchExpressions.push({ key, operator, values })
    }
  }
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  }
}
