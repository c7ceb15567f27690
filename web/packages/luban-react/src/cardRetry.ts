// The retry action of a card whose submit did not land (network error,
// 5xx): the holder of the cards provides it, a card's error line offers it.
import { createContext } from 'react'
import type { CardItem } from './card'

/**
 * RetryContext carries "send this card's last answer again"; null where no
 * retry is offered (the inbox panel, tests of a lone card).
 */
export const RetryContext = createContext<((card: CardItem) => void) | null>(null)
